import type { AlertStore } from '../alerts/alert-store.js';
import type { Silence } from '../notify/mute/silence.js';
import type { Clock } from '../util/clock.js';
import { errorMessage } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { HistoryJournal } from './history-journal.js';
import type { AttemptRecord, FlowDayRecord, HistoryRecord, OccurrenceRecord, SilenceEventRecord } from './history-records.js';
import type { HistoryStore } from './history-store.js';
import { storeCause, writeRefusal } from './write-refusal.js';

/** Records written per statement batch; a backlog after an outage goes in several. */
const DRAIN_BATCH = 1_000;
/** While the database refuses writes, they are tried again this often. */
const RETRY_MS = 5_000;
/**
 * A database that has not answered a drain's statement for this long is called down at once, while the statement
 * goes on waiting for its own timeout (30 s on PostgreSQL): a hung server (a stopped process, a stuck disk) is
 * seen within seconds, and TransferWatchHistoryDown fires after HISTORY_DOWN_AFTER_MS as for one that refuses.
 */
const HUNG_AFTER_MS = 5_000;
/** The retention sweep runs this often (and once soon after start). */
const PRUNE_EVERY_MS = 3_600_000;

export interface HistoryRecorderOptions {
  store: HistoryStore;
  journal: HistoryJournal;
  alerts: () => AlertStore;
  clock: Clock;
  logger: Logger;
  retentionMs: number;
  /** The database answered (true) or refused (false) the last write. */
  onUp?: (up: boolean) => void;
  /** A record the database refused for its content was given up (its kind: alert, attempt, silence, occurrence). */
  onGivenUp?: (kind: string) => void;
  /** After records left the alert journal, the alert snapshot should be written (without them). */
  onAlertEventsRecorded?: () => void;
  /** Default HUNG_AFTER_MS (tests shorten it). */
  hungAfterMs?: number;
}

/**
 * Writes the history (contract section 12) from the replica that decides: alert events journaled in the alert
 * snapshot, notification attempts and silence events journaled in HistoryJournal. A write that fails leaves
 * them where they are and is tried again every RETRY_MS; the database's ids keep a record written twice once.
 */
export class HistoryRecorder {
  private draining: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private lastPrune = Number.NEGATIVE_INFINITY;
  private upNow: boolean | undefined;
  private downSince: number | undefined;
  private stopped = false;
  /** Records the database refused (bad values), given up one by one. */
  refused = 0;
  /** The kinds of content refusal said in the log already. */
  private readonly refusalsLogged = new Set<string>();

  constructor(private readonly opts: HistoryRecorderOptions) {}

  /** Whether the last write went through (undefined before the first). */
  get up(): boolean | undefined {
    return this.upNow;
  }

  /** Since when writes have been failing, or undefined. */
  get failingSince(): number | undefined {
    return this.downSince;
  }

  /** Records waiting for the database (journal and alert events). */
  get backlog(): number {
    return this.opts.journal.size + this.opts.alerts().unrecordedCount;
  }

  /**
   * A notification attempt: durable once this resolves (before the attempt's outcome is taken as done).
   * `inFlight`: the record that stands if the process dies before the outcome, which replaces it (same id); it is
   * not written to the database while this process waits for the outcome.
   */
  async attempt(record: AttemptRecord, opts: { inFlight?: boolean } = {}): Promise<void> {
    await this.opts.journal.add([record], opts);
    if (!opts.inFlight) this.soon();
  }

  /** An occurrence of an expected file as it stands now (a later one of the same id replaces it). */
  /** Flow days (the per-flow daily summary, contract section 13): durable once this resolves. */
  async flowDays(records: readonly FlowDayRecord[]): Promise<void> {
    if (records.length > 0) await this.opts.journal.add(records);
  }

  async occurrence(record: OccurrenceRecord): Promise<void> {
    await this.opts.journal.add([record]);
    this.soon();
  }

  /**
   * The silences as they stand now: what changed since the last call (a new one, a new version, an expiry)
   * becomes a silence event. An expiry is recorded when it passes, at its `endsAt`.
   */
  async silences(list: readonly Silence[], now: number): Promise<void> {
    const marks = this.opts.journal.silences;
    const events: SilenceEventRecord[] = [];
    let changed = false;
    for (const s of list) {
      const updatedAt = Date.parse(s.updatedAt);
      const endsAt = Date.parse(s.endsAt);
      const startsAt = Date.parse(s.startsAt);
      const mark = marks[s.id];
      const base = { kind: 'silence' as const, silence_id: s.id, matchers: s.matchers, created_by: s.createdBy, comment: s.comment, starts_at: startsAt, ends_at: endsAt };
      if (!mark || mark.updatedAt !== updatedAt) {
        // Expired through the API (endsAt set to the moment of the change) is an expiry, not an update.
        const expiredByHand = endsAt <= updatedAt;
        const event = expiredByHand ? 'expired' : mark ? 'updated' : 'created';
        events.push({ ...base, id: event === 'created' ? `${s.id}:created` : event === 'expired' ? `${s.id}:expired` : `${s.id}:updated:${updatedAt}`, at: updatedAt, event });
        marks[s.id] = { updatedAt, expired: expiredByHand };
        changed = true;
        continue;
      }
      if (!mark.expired && endsAt <= now) {
        events.push({ ...base, id: `${s.id}:expired`, at: endsAt, event: 'expired' });
        mark.expired = true;
        changed = true;
      }
    }
    // Silences no longer kept (garbage-collected after their retention) need no mark any more.
    const kept = new Set(list.map((s) => s.id));
    for (const id of Object.keys(marks)) {
      if (!kept.has(id)) {
        delete marks[id];
        changed = true;
      }
    }
    if (events.length > 0) await this.opts.journal.add(events);
    if (changed) await this.opts.journal.compact();
    if (events.length > 0) this.soon();
  }

  /** Write what is waiting now (single flight; a call while one runs runs once more after it). */
  drain(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    this.draining = this.drainOnce().finally(() => {
      this.draining = undefined;
      if (this.again) {
        this.again = false;
        void this.drain();
      }
    });
    return this.draining;
  }

  /** Stop the timers; what is waiting stays journaled for the next leader or start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.draining;
  }

  private soon(delayMs = 0): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, delayMs);
    this.timer.unref();
  }

  private async drainOnce(): Promise<void> {
    const { store, journal, logger, clock } = this.opts;
    const hungAfter = this.opts.hungAfterMs ?? HUNG_AFTER_MS;
    const watchdog = setTimeout(() => this.setUp(false, `the history database has not answered for ${hungAfter / 1000} s (hung, or unreachable)`), hungAfter);
    watchdog.unref();
    try {
      await store.ensureSchema();
      for (let round = 0; ; round++) {
        const alerts = this.opts.alerts();
        const batch: HistoryRecord[] = [...alerts.unrecordedEvents(DRAIN_BATCH), ...journal.pending(DRAIN_BATCH)];
        if (batch.length === 0) {
          // Nothing to write: still ask, so an outage is seen (and alerted on) before there is something to lose.
          if (round === 0) await store.ping();
          break;
        }
        await this.writeBatch(batch);
        const ids = new Set(batch.map((r) => r.id));
        const alertIds = new Set(batch.filter((r) => r.kind === 'alert').map((r) => r.id));
        alerts.eventsRecorded(alertIds);
        if (alertIds.size > 0) this.opts.onAlertEventsRecorded?.();
        await journal.recorded(ids);
        if (batch.length < DRAIN_BATCH) break;
      }
      const now = clock.now();
      if (now - this.lastPrune >= PRUNE_EVERY_MS) {
        this.lastPrune = now;
        const deleted = await store.prune(now - this.opts.retentionMs);
        if (deleted > 0) logger.info({ deleted, retention_ms: this.opts.retentionMs }, 'history older than its retention deleted');
      }
      clearTimeout(watchdog);
      this.setUp(true);
    } catch (err) {
      clearTimeout(watchdog);
      // The cause first, in the words of the disk or the server (full, read-only), then what the driver said.
      const cause = storeCause(err);
      this.setUp(false, cause ? `${cause}: ${errorMessage(err)}` : errorMessage(err));
      this.soon(RETRY_MS);
    }
  }

  /**
   * Write a batch in one transaction. A refusal for a reason of the store (full, read-only, locked, corrupt, gone,
   * unreachable) leaves the whole batch in the journal: the history is down, and it is written when the store takes
   * it again. A refusal for a record's own content is that record's: the records are then written one by one, and
   * only the ones the database refuses for their content are given up (counted; logged once per kind of refusal), so
   * one record never holds back the history and a full disk never loses one.
   */
  private async writeBatch(batch: HistoryRecord[]): Promise<void> {
    const { store } = this.opts;
    try {
      await store.write(batch);
      return;
    } catch (err) {
      if (writeRefusal(err).kind === 'store') throw err;
      await store.ping(); // throws when the database is down: the batch waits, as a whole
      for (const record of batch) {
        try {
          await store.write([record]);
        } catch (one) {
          if (writeRefusal(one).kind === 'store') throw one;
          this.giveUp(record, one);
        }
      }
    }
  }

  /** A record the database refuses for its content: counted, and said once per kind of refusal. */
  private giveUp(record: HistoryRecord, err: unknown): void {
    const { store, logger } = this.opts;
    const { code } = writeRefusal(err);
    this.refused++;
    this.opts.onGivenUp?.(record.kind);
    if (this.refusalsLogged.has(code)) return;
    this.refusalsLogged.add(code);
    logger.error(
      { kind: record.kind, id: record.id, code, err: { type: 'HistoryWriteError', message: store.redact(errorMessage(err)) } },
      'a history record the database refuses for its content was given up (said once per kind of refusal; transfer_watch_history_records_given_up_total counts them)',
    );
  }

  private setUp(up: boolean, why?: string): void {
    const { logger, clock, store } = this.opts;
    if (up && this.upNow === false) {
      logger.info({ history: store.opened.where, down_for_ms: clock.now() - (this.downSince ?? clock.now()) }, 'history database reachable again; the records kept meanwhile are written');
    }
    if (!up && this.upNow !== false) {
      logger.warn(
        { history: store.opened.where, err: { type: 'HistoryWriteError', message: store.redact(why ?? '') }, waiting: this.backlog },
        'history database unreachable: alerting goes on, history records are kept in the state store and written when it is back',
      );
    }
    if (up) this.downSince = undefined;
    else this.downSince ??= clock.now();
    this.upNow = up;
    this.opts.onUp?.(up);
  }
}
