import type { SendOutcome } from '../../notify/deliver/recent-sends.js';
import type { Silence } from '../../notify/mute/silence.js';
import type { ExpectedFile } from '../../rules/rule-evaluator.js';

export type { ExpectedFile } from '../../rules/rule-evaluator.js';
export type { SendOutcome } from '../../notify/deliver/recent-sends.js';
export type { Silence } from '../../notify/mute/silence.js';

/** An active alert as the page shows it (times in epoch ms). */
export interface StatusPageAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: number;
  fingerprint: string;
  /** Ids of the active silences that match it. */
  silencedBy: string[];
  inhibitedBy: string[];
  /** Held firing by keep_firing_for after its condition cleared (see Alert.held). */
  held?: { until: number; clearedAt: number; keepFiringFor: number };
  /** Who acknowledged it (contract 14). */
  ack?: { by: string; at: number; comment: string };
}

export interface StatusPageStream {
  stream: string;
  instance: string | undefined;
  /** ISO 8601 as in /api/v1/status, or null before the first success. */
  lastSuccessfulPoll: string | null;
  dataLagSeconds: number | null;
  lastError: { reason: string; message: string; at: string } | null;
}

export interface StatusPageSource {
  name: string;
  up: boolean;
  streams: StatusPageStream[];
}

/** Everything the status page shows, gathered by the daemon at request time. */
export interface StatusPageData {
  now: number;
  /** `display_timezone` from the config: alert, poll and notification times are shown in it. */
  timezone: string;
  version: string;
  alerts: StatusPageAlert[];
  expectations: ExpectedFile[];
  sources: StatusPageSource[];
  sends: SendOutcome[];
  silences: Silence[];
  /** Where the history is kept and whether it answers (`history: disabled` says why). */
  history?: { history: 'sqlite' | 'postgres' | 'disabled'; up?: boolean; waiting?: number; why?: string };
  /** With `ha:`: this replica, the leader, and which replica polls each source (null: nobody right now). */
  cluster?: { replica: string; leader: string | null; leading: boolean; redisUp: boolean; replicas: string[]; sources: Record<string, string | null> };
}
