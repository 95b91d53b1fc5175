import type { FlowView } from '../flows/flow-view.js';
/**
 * What the HTTP server needs from the daemon. Structural, so the server can be started in tests with
 * plain objects and does not depend on the daemon's modules.
 */

import type { StatusPageData } from './status-page/status-page-data.js';
import type { HistoryReader } from './history-routes.js';
import type { SlaSource } from './sla-routes.js';

/**
 * Silences as the notify stage manages them. The real type lives in src/notify/; the server only needs
 * this shape: silences are JSON-serialisable objects.
 */
export interface SilenceApi {
  list(): unknown[];
  get(id: string): unknown;
  /** Validates `input` (the request body); throws an error with code `silence_invalid` when it is wrong. */
  create(input: unknown): Promise<unknown>;
  /** False when no such silence exists. */
  expire(id: string): Promise<boolean>;
}

/** The query parameters of Alertmanager's `GET /api/v2/alerts` and `/api/v2/alerts/groups`. */
export interface AlertmanagerAlertQuery {
  active: boolean;
  silenced: boolean;
  inhibited: boolean;
  /** Only `/alerts/groups` takes it. */
  muted?: boolean;
  /** Matchers in Alertmanager's syntax; an invalid one throws an error with code `matcher_invalid`. */
  filter: string[];
  /** An anchored regex on receiver names. */
  receiver?: string;
}

/** Alerts, groups, silences and status in Alertmanager's API v2 shapes (amtool, Grafana). */
export interface AlertmanagerView {
  status(): unknown;
  /** `[{name}]` of every configured receiver. */
  receivers(): unknown[];
  alerts(query: AlertmanagerAlertQuery): unknown[];
  alertGroups(query: AlertmanagerAlertQuery): unknown[];
  /** Silences whose own matchers satisfy every `filter` matcher. */
  silences(filter: string[]): unknown[];
}

import type { CalendarConfig } from '../sla/business-calendar.js';
import type { ApiAck } from '../notify/ack/ack.js';

/** What `/api/v1/acks` maps onto. */
export interface AckApi {
  list(): ApiAck[];
  get(id: string): ApiAck | undefined;
  /** Acknowledge the firing alerts the body selects; throws AckError (400, or 404 when none fires). */
  create(input: unknown): Promise<ApiAck>;
  /** Take an ack back; false: no such ack (404). */
  remove(id: string, by: string): Promise<boolean>;
  /** The alerts a message's acknowledge link names, or undefined for a link this cluster did not sign. */
  verifyLink(token: string): { fingerprints: string[]; at: number } | undefined;
  /**
   * Acknowledge, in `by`'s name, the alerts a signed token names that fire and nobody acknowledged (a mail's link, a
   * Slack button): `invalid` for a token this cluster did not sign, `nothing` when none is left. Throws AckError.
   */
  acknowledgeLink(token: string, by: string, comment: string): Promise<ApiAck | 'invalid' | 'nothing'>;
}

export interface DaemonApi {
  /** True once config and state are loaded, false while starting or shutting down. */
  ready(): boolean;
  /** Active alerts: `{labels, annotations, state, activeAt, fingerprint}` each. */
  alerts(): unknown[];
  /** Per source and stream: cursor, last successful poll, up, last error. */
  status(): unknown;
  /** Reload config and rules; keeps the last good ones on error. */
  reload(): Promise<{ ok: boolean; error?: string }>;
  silences: SilenceApi;
  /** Acknowledgements (`/api/v1/acks`, contract 14); absent: those paths are 404. */
  acks?: AckApi;
  /** The silences the status page's forms create, in the daemon's own time (default: `silences`). */
  pageSilences?: SilenceApi;
  /** Alertmanager's API v2 under `/api/v2/` (absent: those paths are 404). */
  alertmanager?: AlertmanagerView;
  /** What the on-call status page at `/` shows; without it `/` is a plain index of the endpoints. */
  statusPage?(): StatusPageData;
  /**
   * The history of alerts, notifications and silences (`/api/v1/history/*`, contract section 12). A string: the
   * history is disabled, and why (those endpoints answer 503 saying so).
   */
  history?: HistoryReader | string;
  /** The SLA ledger (`/api/v1/sla/*`, contract section 11), or why there is none. */
  sla?: () => SlaSource | string;
  /** Today's expected files (`expected` of `/api/v1/alerts`), as the leader published them. */
  expectedFiles?(): unknown[];
  /** The flow summary's report (`/api/v1/flows`, `/flows`, contract section 13), or why there is none. */
  flows?: () => FlowView | string;
  /** The config's business calendars (`/api/v1/calendars/NAME`): what each excludes. */
  calendars?(): Record<string, CalendarConfig>;
  /** The display time zone and version, for pages other than `/` (the history page). */
  pageInfo?(): { timezone: string; version: string };
  /**
   * The daemon's clock (default: the wall clock): default ranges of the history, the pages' "today", an excuse's
   * time. The demo's clock runs in a simulated morning, and every answer is on that one clock.
   */
  now?(): number;
}

/** What `/metrics` serves (TransferWatchMetrics fits). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}
