import { z } from 'zod';
import type { Clock } from '../../util/clock.js';
import { LEADER_LEASE, sourceLease, type Cluster } from '../../cluster/cluster.js';
import type { Alert, AlertAck } from '../../alerts/alert.js';
import type { StreamStatus } from '../../poller/poll-stream.js';
import type { StatusPageData } from '../../http/status-page/status-page-data.js';
import type { LoadedSetup } from '../load-setup.js';
import { LEADER_BOARD_KEY, SOURCES_UP_BOARD_KEY, type LeaderBoardEntry, type LeadingRole } from './leading-role.js';
import { streamsBoardKey } from './source-polling-role.js';

/** The JSON of one alert in `/api/v1/alerts`. */
export interface ApiAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  fingerprint: string;
  silenced: boolean;
  silencedBy: string[];
  inhibitedBy: string[];
  mutedBy: string[];
  /** Its condition cleared; `keep_firing_for` keeps it firing until then (RFC 3339). Absent otherwise. */
  keptFiringUntil?: string;
  /** Who acknowledged it (contract 14); absent while nobody has. */
  ack?: { id: string; by: string; at: string; comment: string };
}

/** Which replica this is, who leads and who polls each source (status API `ha`, page `cluster`). */
export interface ClusterView {
  replica: string;
  leader: string | null;
  leading: boolean;
  redisUp: boolean;
  replicas: string[];
  sources: Record<string, string | null>;
}

const lastErrorSchema = z.object({ reason: z.string(), message: z.string(), at: z.string() }).nullable();
// Board entries come from other replicas through the store: parsed like any input, never cast.
const streamStatusesSchema: z.ZodType<Array<Omit<StreamStatus, 'instance'> & { instance?: string | null | undefined }>> = z.array(
  z.object({
    id: z.string(),
    source: z.string(),
    stream: z.enum(['failures', 'successes']),
    instance: z.string().optional().nullable(),
    cursor: z.string().nullable(),
    up: z.boolean(),
    lastSuccessfulPoll: z.string().nullable(),
    lastError: lastErrorSchema,
    retryAt: z.string().nullable(),
    dataLagSeconds: z.number().nullable(),
  }),
);
// Typed against the interfaces (no cast): what it parses is what the view uses.
const leaderEntrySchema: z.ZodType<LeaderBoardEntry> = z.object({
  expectations: z.array(
    z.object({
      rule: z.string(),
      key: z.object({ label: z.string(), value: z.string() }).optional(),
      files: z.array(z.string()),
      deadline: z.number(),
      windowStart: z.number(),
      timezone: z.string(),
      status: z.enum(['arrived', 'late', 'missing', 'in_jeopardy', 'not_due', 'awaiting_data']),
      arrivedAt: z.number().optional(),
      count: z.number(),
      minCount: z.number(),
      learnedWarning: z.union([z.object({ at: z.number(), judged: z.number() }), z.object({ why: z.string() })]).optional(),
    }),
  ),
  sends: z.array(
    z.object({
      at: z.number(),
      receiver: z.string(),
      integration: z.string(),
      // (`given_up`: the word of a replica of an earlier version, during a rolling upgrade)
      outcome: z.enum(['sent', 'failed', 'retrying', 'gave_up', 'given_up']).transform((o) => (o === 'given_up' ? 'gave_up' : o)),
      status: z.enum(['firing', 'resolved']),
      alerts: z.array(z.string()),
      attempts: z.number(),
      error: z.string().optional(),
    }),
  ),
});
const sourcesUpSchema = z.record(z.string(), z.boolean());

export interface SharedViewOptions {
  cluster: Cluster;
  clock: Clock;
  version: string;
  startedAt: number;
  setup: () => LoadedSetup;
  leading: LeadingRole;
  ready: () => boolean;
  lastReload: () => { ok: boolean; at: number; error?: string } | undefined;
  /** Where the history is kept (`sqlite`, `postgres` or `disabled`), and how it stands. */
  history: () => HistoryStatus;
}

/** `/api/v1/status`'s `history` and `historyStore`. */
export interface HistoryStatus {
  history: 'sqlite' | 'postgres' | 'disabled';
  /** The file, or `postgres://host:port/db` (no credentials). */
  where?: string;
  /** The last write or read went through. */
  up?: boolean;
  /** Records waiting in the state store for the database (the leader only). */
  waiting?: number;
  /** Why there is no history. */
  why?: string;
}

/**
 * The view every replica serves (the page, `/api/v1/*`, `/api/v2/*`): alerts and silences from the shared
 * state, every source's streams as their pollers published them, expectations and recent sends as the leader
 * published them. The leader reads the same entries (its own live), so the replicas show one picture.
 */
export class SharedView {
  private holders: Record<string, string | null> = {};

  constructor(private readonly opts: SharedViewOptions) {}

  /** The board entries the view reads (the cluster reads them back from the other replicas). */
  boardKeys(): string[] {
    return [LEADER_BOARD_KEY, SOURCES_UP_BOARD_KEY, ...this.opts.setup().config.sources.map((s) => streamsBoardKey(s.name))];
  }

  /** Who holds which lease (once a second) and the followers' alerts and silences. */
  async refresh(): Promise<void> {
    try {
      this.holders = await this.opts.cluster.coordinator.holders();
    } catch {
      /* the store is down: keep the last holders; the coordination alert says so */
    }
    await this.opts.leading.follow();
  }

  /** Every stream of a source as its poller last published it, the data lag as of now. */
  streamsOf(source: string): StreamStatus[] | undefined {
    const parsed = streamStatusesSchema.safeParse(this.opts.cluster.board.get(streamsBoardKey(source)));
    if (!parsed.success) return undefined;
    const now = this.opts.clock.now();
    return parsed.data.map((s) => ({
      ...s,
      instance: s.instance ?? undefined,
      dataLagSeconds: s.cursor === null ? null : Math.max(0, (now - Date.parse(s.cursor)) / 1000),
    }));
  }

  private leaderEntry(): LeaderBoardEntry | undefined {
    const parsed = leaderEntrySchema.safeParse(this.opts.cluster.board.get(LEADER_BOARD_KEY));
    return parsed.success ? parsed.data : undefined;
  }

  private sourcesUp(): Record<string, boolean> | undefined {
    const parsed = sourcesUpSchema.safeParse(this.opts.cluster.board.get(SOURCES_UP_BOARD_KEY));
    return parsed.success ? parsed.data : undefined;
  }

  private activeAlerts(): Array<Alert & { state: 'pending' | 'firing' }> {
    return this.opts.leading.alerts.alerts().filter((a): a is Alert & { state: 'pending' | 'firing' } => a.state !== 'resolved');
  }

  apiAlerts(): ApiAlert[] {
    const notifier = this.opts.leading.notifier;
    return this.activeAlerts().map((a) => {
      const s = notifier.alertStatus(a);
      return {
        labels: a.labels,
        annotations: a.annotations,
        state: a.state,
        activeAt: new Date(a.activeAt).toISOString(),
        fingerprint: a.fingerprint,
        silenced: s.silencedBy.length > 0,
        silencedBy: s.silencedBy,
        inhibitedBy: s.inhibitedBy,
        mutedBy: s.mutedBy,
        ...(a.held ? { keptFiringUntil: new Date(a.held.until).toISOString() } : {}),
        ...ackJson(notifier.acks.ackOf(a.fingerprint)),
      };
    });
  }

  /** Whether a source is up: as the leader judged it, or from its streams while no leader has published. */
  private sourceUp(name: string, streams: readonly StreamStatus[], judged: Record<string, boolean> | undefined): boolean {
    return judged?.[name] ?? streams.every((st) => st.lastError === null);
  }

  /**
   * The expected files of today as `/api/v1/alerts` adds them (`expected`): times as RFC 3339, and for
   * `warn_before: auto` when the learned warning comes or why there is none.
   */
  expectedFiles(): Array<Record<string, unknown>> {
    return (this.leaderEntry()?.expectations ?? []).map((e) => ({
      rule: e.rule,
      ...(e.key ? { key: { [e.key.label]: e.key.value } } : {}),
      files: e.files,
      deadline: new Date(e.deadline).toISOString(),
      window_start: new Date(e.windowStart).toISOString(),
      timezone: e.timezone,
      status: e.status,
      arrived_at: e.arrivedAt === undefined ? null : new Date(e.arrivedAt).toISOString(),
      count: e.count,
      min_count: e.minCount,
      ...(e.learnedWarning
        ? { learned_warning: 'why' in e.learnedWarning ? { warns_at: null, why: e.learnedWarning.why } : { warns_at: new Date(e.learnedWarning.at).toISOString(), judged: e.learnedWarning.judged } }
        : {}),
    }));
  }

  /** What the status page at `/` shows, read at request time. */
  statusPageData(): StatusPageData {
    const now = this.opts.clock.now();
    const config = this.opts.setup().config;
    const notifier = this.opts.leading.notifier;
    const leader = this.leaderEntry();
    const judged = this.sourcesUp();
    return {
      now,
      timezone: config.display_timezone,
      version: this.opts.version,
      history: this.opts.history(),
      alerts: this.activeAlerts().map((a) => {
        const s = notifier.alertStatus(a);
        return {
          labels: a.labels,
          annotations: a.annotations,
          state: a.state,
          activeAt: a.activeAt,
          fingerprint: a.fingerprint,
          silencedBy: s.silencedBy,
          inhibitedBy: s.inhibitedBy,
          ...(a.held ? { held: a.held } : {}),
          ...pageAck(notifier.acks.ackOf(a.fingerprint)),
        };
      }),
      expectations: leader?.expectations ?? [],
      ...(this.opts.cluster.description.shown ? { cluster: this.clusterView() } : {}),
      sources: config.sources.map((s) => {
        const streams = this.streamsOf(s.name) ?? [];
        return {
          name: s.name,
          up: this.sourceUp(s.name, streams, judged),
          streams: streams.map((st) => ({ stream: st.stream, instance: st.instance, lastSuccessfulPoll: st.lastSuccessfulPoll, dataLagSeconds: st.dataLagSeconds, lastError: st.lastError })),
        };
      }),
      sends: leader?.sends ?? [],
      silences: notifier.silences.list(),
    };
  }

  clusterView(): ClusterView {
    const { cluster } = this.opts;
    return {
      replica: cluster.replica,
      leader: this.holders[LEADER_LEASE] ?? null,
      leading: this.opts.leading.leading,
      redisUp: cluster.coordinator.up,
      replicas: [...cluster.coordinator.replicas],
      sources: Object.fromEntries(this.opts.setup().config.sources.map((s) => [s.name, this.holders[sourceLease(s.name)] ?? null])),
    };
  }

  /** `/api/v1/status`. */
  status(): unknown {
    const { cluster } = this.opts;
    const config = this.opts.setup().config;
    const judged = this.sourcesUp();
    const reload = this.opts.lastReload();
    return {
      ready: this.opts.ready(),
      startedAt: new Date(this.opts.startedAt).toISOString(),
      // The zone people read times in (pages, messages, the CLI's tables).
      displayTimezone: config.display_timezone,
      ...(cluster.description.shown ? { ha: this.clusterView() } : {}),
      sources: config.sources.map((s) => {
        const streams = this.streamsOf(s.name) ?? [];
        return { name: s.name, up: this.sourceUp(s.name, streams, judged), streams };
      }),
      config: reload
        ? { lastReloadSuccessful: reload.ok, lastReloadAt: new Date(reload.at).toISOString(), ...(reload.error ? { lastReloadError: reload.error } : {}) }
        : null,
      state: {
        ...cluster.description.state,
        writable: cluster.leaderState.lastWriteOk,
        ...(cluster.leaderState.lastWriteError ? { lastError: cluster.leaderState.lastWriteError } : {}),
      },
      ...historyFields(this.opts.history()),
    };
  }
}

function historyFields({ history, ...store }: HistoryStatus): { history: HistoryStatus['history']; historyStore: Omit<HistoryStatus, 'history'> } {
  return { history, historyStore: store };
}

/** `"ack":{"by","at","comment","id"}` of an acknowledged alert (contract 14), nothing otherwise. */
function ackJson(ack: AlertAck | undefined): { ack?: { id: string; by: string; at: string; comment: string } } {
  return ack ? { ack: { id: ack.id, by: ack.by, at: new Date(ack.at).toISOString(), comment: ack.comment } } : {};
}

function pageAck(ack: AlertAck | undefined): { ack?: { by: string; at: number; comment: string } } {
  return ack ? { ack: { by: ack.by, at: ack.at, comment: ack.comment } } : {};
}
