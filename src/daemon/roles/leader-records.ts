import { z } from 'zod';
import { historyDamagedCandidate } from '../../alerts/history-damaged.js';
import { HistoryCare } from './history-care.js';
import { SlaRejudge } from './sla-rejudge.js';
import { retryGivenUpWindows, type BackfillRetryResult } from './sla-backfill-retry.js';
import type { LedgerReadOptions } from './ledger-engine.js';
import type { Alert } from '../../alerts/alert.js';
import type { AlertStore } from '../../alerts/alert-store.js';
import { HISTORY_DOWN_AFTER_MS, historyDownCandidate } from '../../alerts/history-down.js';
import type { Cluster } from '../../cluster/cluster.js';
import type { Config, SourceConfig } from '../../config/schema.js';
import { HistoryJournal } from '../../history/history-journal.js';
import { HistoryRecorder } from '../../history/history-recorder.js';
import type { HistoryStore } from '../../history/history-store.js';
import type { TransferWatchMetrics } from '../../metrics/transfer-watch-metrics.js';
import type { DeliveryAttempt } from '../../notify/deliver/deliver-stage.js';
import type { Notifier } from '../../notify/notifier.js';
import { titleOf } from '../../notify/templates/template-context.js';
import type { Poller } from '../../poller/poller.js';
import type { RuleDefinition } from '../../rules/registry.js';
import type { OccurrenceRecord } from '../../sla/occurrence.js';
import type { Clock } from '../../util/clock.js';
import { TransferWatchError, errorFields, isFencedError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { backfillSlaLedger, type HandedOverRead } from './sla-backfill.js';
import { SlaReportSchedules } from './sla-report-schedule.js';
import { FlowRecorder } from '../../flows/flow-recorder.js';
import { USUAL_ARRIVAL_OCCURRENCES, UsualArrivals } from '../../sla/usual-arrivals.js';
import type { Transfer } from '../../source/transfer.js';

/** The record of a request the daemon died during: it went out, and nobody knows what the receiver did with it. */
const INTERRUPTED = 'interrupted: the daemon stopped while this request was in flight; the receiver may have it (it is sent again)';
/** An occurrence decided longer ago than this is a replay of history (after a restart), not counted in the metrics again. */
const RECENT_DECISION_MS = 30 * 60_000;
/** The label sets of at most this many alerts are kept with a notification attempt (all fingerprints are). */
const MAX_ALERTS_RECORDED = 100;
/**
 * The occurrences already counted in transfer_watch_sla_occurrences_total (id and outcome), in the leader's state: a
 * restart replays the recent deadlines, and the counter must not move for them again (contract section 11a).
 */
const SLA_COUNTED_KEY = 'sla.counted';
const countedSchema = z.record(z.string(), z.number());
/** Each key's usual arrival (warn_before: auto) is learned again from the ledger this often. */
const USUAL_REFRESH_MS = 600_000;
/** How far back the ledger is read for the last judged occurrences of a key. */
const USUAL_LOOKBACK_MS = 400 * 86_400_000;
/** The flow days that changed go to the history journal this often (and when the leadership ends). */
const FLOW_FLUSH_MS = 30_000;

export interface LeaderRecordsOptions {
  /** Where the history is written while this process leads (contract section 12); undefined: no history. */
  history: HistoryStore | undefined;
  cluster: Cluster;
  clock: Clock;
  logger: Logger;
  metrics: TransferWatchMetrics;
  config: () => Config;
  rules: () => readonly RuleDefinition[];
  /** A poller of one source that re-reads its history (the SLA backfill). */
  replayPoller: (source: SourceConfig) => Poller;
  /** The leader's alert store (alert events are journaled from it; TransferWatchHistoryDown is set on it). */
  alerts: () => AlertStore;
  /** The end of a backfill's read, for the live rules (the seam of backfill and live, contract section 11). */
  adoptBackfill?: (read: HandedOverRead) => void;
  /** How much of the read's end the live rules can use (their history, at most the replay's). */
  handOverSpan?: () => number;
}

/**
 * What the leader writes down, beside the role that decides: the history (alert events, notification attempts,
 * silence events, through a recorder of each leadership on the journal the last leader left), the SLA ledger
 * (occurrences as the rules decide them, the backfill from the service's history) and the scheduled SLA reports.
 * One per process; a leadership begins it (`begin`) and ends it (`end`), so a cluster of one and of three write
 * the same records through the same code.
 */
export class LeaderRecords {
  /** Writes the history while leading (a new one at each takeover). */
  private recorder: HistoryRecorder | undefined;
  private reports: SlaReportSchedules | undefined;
  /** The per-flow daily summary of what the leader reads (contract section 13). */
  private readonly flows = new FlowRecorder();
  private flowTimer: NodeJS.Timeout | undefined;
  /** Each key's usual arrival for `warn_before: auto`, learned from the ledger (the rules read it). */
  readonly usual = new UsualArrivals();
  private usualTimer: NodeJS.Timeout | undefined;
  /** Reads again the windows a backfill gave up, every sla.backfill_retry while leading (contract 12a). */
  private retryTimer: NodeJS.Timeout | undefined;
  /** The SQLite history's checks, backups and repair while leading (contract 12a). */
  private care: HistoryCare | undefined;
  /** Counted occurrences (id and outcome → deadline), kept while they can be decided again by a replay. */
  private counted = new Map<string, number>();
  private countedSave: Promise<void> | undefined;

  /**
   * `sla rejudge` on this process (contract 11c): the API's and a damaged store's repair share it, so that one runs at
   * a time. Undefined without a history.
   */
  readonly rejudge: SlaRejudge | undefined;

  constructor(private readonly opts: LeaderRecordsOptions) {
    const history = opts.history;
    this.rejudge = history ? new SlaRejudge(() => ({ ...this.ledgerReads(), ledger: history.ledger })) : undefined;
  }

  /** What the ledger's reads of the service history need (a re-judgement, the given-up windows' reads). */
  private ledgerReads(): LedgerReadOptions {
    return { config: this.opts.config(), rules: this.opts.rules(), replayPoller: this.opts.replayPoller, clock: this.opts.clock, logger: this.opts.logger };
  }

  /** Whether there is a history to write (alert events are then recorded by the alert store). */
  get enabled(): boolean {
    return this.opts.history !== undefined;
  }

  /** The history writer of the current leadership, if any. */
  get current(): HistoryRecorder | undefined {
    return this.recorder;
  }

  /** A history writer for a leadership about to begin, on the journal the last leader left in the shared state. */
  async open(): Promise<HistoryRecorder | undefined> {
    const { history, cluster, clock, metrics, logger } = this.opts;
    if (!history) return undefined;
    const journal = new HistoryJournal(cluster.leaderState, logger);
    await journal.restore();
    const counted = countedSchema.safeParse(await cluster.leaderState.load(SLA_COUNTED_KEY).catch(() => undefined));
    this.counted = new Map(counted.success ? Object.entries(counted.data) : []);
    return new HistoryRecorder({
      store: history,
      journal,
      alerts: () => this.opts.alerts(),
      clock,
      logger,
      retentionMs: this.opts.config().history.retention,
      onUp: (up) => metrics.setHistoryUp(up && history.damage === undefined),
      onGivenUp: (kind) => metrics.observeHistoryGivenUp(kind),
      onAlertEventsRecorded: () => void this.opts.alerts().flush().catch(() => undefined),
    });
  }

  /** The leadership began with `recorder` (from `open`): it writes from now on, before the first evaluation. */
  begin(recorder: HistoryRecorder | undefined, liveFrom: number): void {
    this.recorder = recorder;
    this.liveFrom = liveFrom;
  }

  /**
   * When this leadership began: an occurrence decided before it (a deadline of the time nothing ran, judged as this
   * process read its way to the present) is no live decision of this process, and is not counted (contract 11b).
   */
  private liveFrom = Number.POSITIVE_INFINITY;

  /** Once the leadership evaluates and reads the bus: the ledger is backfilled while `current()` holds, the reports start. */
  startJobs(current: () => boolean): void {
    void this.learnUsualArrivals();
    // At every start (after its backfill, which gives windows up) and every sla.backfill_retry, the windows a backfill
    // gave up are read again.
    void this.backfill(current).then(async () => {
      if (current()) await this.retryBackfill();
      if (current()) await this.care?.backupIfStale();
      await this.learnUsualArrivals();
    });
    clearInterval(this.retryTimer);
    this.retryTimer = setInterval(() => void (current() ? this.retryBackfill() : undefined), this.opts.config().sla.backfill_retry);
    this.retryTimer.unref();
    this.care?.stop();
    const history = this.opts.history;
    const rejudge = this.rejudge;
    if (history && rejudge) {
      this.care = new HistoryCare({ store: history, config: this.opts.config, clock: this.opts.clock, logger: this.opts.logger, rejudge: (req) => rejudge.run(req), backfill: () => this.backfill(current) });
      this.care.start();
    }
    this.startReports();
    clearInterval(this.usualTimer);
    this.usualTimer = setInterval(() => void this.learnUsualArrivals(), USUAL_REFRESH_MS);
    this.usualTimer.unref();
    clearInterval(this.flowTimer);
    this.flowTimer = setInterval(() => void this.flushFlows(), FLOW_FLUSH_MS);
    this.flowTimer.unref();
  }

  /** Learn again each `warn_before: auto` rule's usual arrivals from the ledger (a failed read keeps the last). */
  async learnUsualArrivals(): Promise<void> {
    const history = this.opts.history;
    if (!history) return;
    const auto = this.opts.rules().filter((r) => r.type === 'missing_file' && r.warn_before === 'auto');
    this.usual.forget(new Set(auto.map((r) => r.name)));
    if (auto.length === 0) return;
    try {
      await history.ensureSchema();
    } catch {
      return; // the database does not answer: the last learned stay, the next refresh tries again
    }
    const since = this.opts.clock.now() - USUAL_LOOKBACK_MS;
    for (const rule of auto) {
      const keys = 'for_each' in rule && rule.for_each ? rule.for_each.values.length : 1;
      try {
        this.usual.learn(rule.name, await history.ledger.recentJudged(rule.name, since, Math.min(100_000, keys * USUAL_ARRIVAL_OCCURRENCES * 3)));
      } catch (err) {
        this.opts.logger.warn({ rule: rule.name, err: errorFields(err) }, 'cannot read the ledger to learn the usual arrivals; the last learned stay');
      }
    }
  }

  /** A transfer the leader read (from the bus, or the history replayed at a takeover): into the flow summary. */
  observeFlow(t: Transfer): void {
    if (this.opts.history) this.flows.observe(t);
  }

  /** The flow days that changed, into the history journal (the database merges them with what it has). */
  async flushFlows(): Promise<void> {
    const recorder = this.recorder;
    if (!recorder || this.flows.pending === 0) return;
    const records = this.flows.take(this.opts.clock.now());
    try {
      await recorder.flowDays(records);
    } catch (err) {
      // A leader that lost its lease is fenced off the journal: the next one reads the same transfers.
      if (!isFencedError(err)) this.opts.logger.warn({ err: errorFields(err), flow_days: records.length }, 'flow summary not journaled; the days are written with their next change');
    }
  }

  /** The leadership ended (stepped down): nothing more is written by this process. */
  end(): void {
    clearInterval(this.flowTimer);
    clearInterval(this.usualTimer);
    clearInterval(this.retryTimer);
    this.care?.stop();
    void this.flushFlows();
    void this.recorder?.stop();
    this.recorder = undefined;
    this.stopReports();
  }

  /**
   * Shutdown while leading: what is journaled is written first. Returns how many history records could not be
   * written (the database refused or did not answer): they stay in the state store's journal, for the next start.
   */
  async close(): Promise<number> {
    clearInterval(this.flowTimer);
    clearInterval(this.usualTimer);
    clearInterval(this.retryTimer);
    this.care?.stop();
    await this.flushFlows();
    // Twice: a drain already running when asked does not take what came after it started (it runs once more after).
    await this.recorder?.drain();
    await this.recorder?.drain();
    const unwritten = this.recorder?.backlog ?? 0;
    await this.recorder?.stop();
    this.recorder = undefined;
    this.stopReports();
    return unwritten;
  }

  /** After an evaluation's snapshot: the alert events it journaled are durable, and go to the database. */
  drain(): void {
    void this.recorder?.drain();
  }

  stopReports(): void {
    this.reports?.stop();
    this.reports = undefined;
  }

  /**
   * The SLA ledger's backfill (sla.backfill), once per rule the ledger was never filled for, beside the live work:
   * at a takeover, and after a reload that added a missing_file rule.
   */
  async backfill(current: () => boolean): Promise<void> {
    const history = this.opts.history;
    if (!history) return;
    try {
      await history.ensureSchema();
      await backfillSlaLedger({
        config: this.opts.config(),
        rules: this.opts.rules(),
        store: history,
        replayPoller: this.opts.replayPoller,
        clock: this.opts.clock,
        logger: this.opts.logger,
        metrics: this.opts.metrics,
        current,
        ...(this.opts.adoptBackfill ? { handOver: this.opts.adoptBackfill } : {}),
        ...(this.opts.handOverSpan ? { handOverSpan: this.opts.handOverSpan() } : {}),
      });
    } catch (err) {
      this.opts.logger.warn({ err: errorFields(err) }, 'SLA backfill failed; it is tried again at the next start or leader change');
    }
  }

  /** One round of reading again the source windows a backfill gave up, now (`sla backfill --retry`); throws when it cannot. */
  async retryGivenUp(): Promise<BackfillRetryResult> {
    const history = this.opts.history;
    if (!history) throw new TransferWatchError('history_disabled', 'there is no history: no backfill to read again');
    await history.ensureSchema();
    return retryGivenUpWindows({ ...this.ledgerReads(), store: history });
  }

  /** The round at a start and every sla.backfill_retry: a failure is said, and tried at the next. */
  private async retryBackfill(): Promise<void> {
    if (!this.opts.history) return;
    await this.retryGivenUp().catch((err: unknown) => {
      this.opts.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not read again the windows it gave up; tried again at the next sla.backfill_retry');
    });
  }

  /**
   * An occurrence of an expected file changed (the SLA ledger): journaled for the history database, and counted when
   * it is decided live (not again when a restart replays the history behind it, never for a seam's: contract 11b).
   */
  occurrence(o: OccurrenceRecord, how?: { seam: true }): void {
    const recorder = this.recorder;
    if (!recorder) return;
    if (!how?.seam) this.countDecision(o);
    recorder
      .occurrence(o)
      .catch((err: unknown) => this.opts.logger.warn({ err: errorFields(err), rule: o.rule }, 'SLA occurrence not journaled; it is told again at the next evaluation after a restart'));
  }

  /** transfer_watch_sla_occurrences_total: once per occurrence and outcome decided recently (a live decision). */
  private countDecision(o: OccurrenceRecord): void {
    const decidedAt = o.outcome === 'on_time' ? o.deadline : o.outcome === 'late' ? (o.arrived_at ?? o.deadline) : o.closes_at;
    const now = this.opts.clock.now();
    const counted = `${o.id}\u001f${o.outcome}`;
    if ((o.final || o.outcome === 'no_data') && decidedAt >= this.liveFrom && now - decidedAt <= RECENT_DECISION_MS && !this.counted.has(counted)) {
      this.opts.metrics.observeOccurrence(o.rule, o.outcome, o.key, o.lateness_seconds);
      this.counted.set(counted, decidedAt);
      for (const [k, at] of this.counted) if (now - at > 2 * RECENT_DECISION_MS) this.counted.delete(k);
      this.saveCounted();
    }
  }

  /** The counted occurrences to the leader's state (one save at a time; the last word wins). */
  private saveCounted(): void {
    if (this.countedSave) return;
    this.countedSave = (async () => {
      // A turn first: the occurrences of one evaluation are saved together.
      await new Promise((r) => setImmediate(r));
      this.countedSave = undefined;
      await this.opts.cluster.leaderState.save(SLA_COUNTED_KEY, Object.fromEntries(this.counted));
    })().catch((err: unknown) => {
      this.countedSave = undefined;
      if (!isFencedError(err)) this.opts.logger.warn({ err: errorFields(err) }, 'counted SLA occurrences not saved; a restart may count the recent ones again');
    });
  }

  /** A delivery attempt: into the history journal, and the first delivered firing notification of each alert timed. */
  async attempt(recorder: HistoryRecorder, a: DeliveryAttempt): Promise<void> {
    const n = a.notification;
    if (a.outcome === 'sent' && n.status === 'firing') {
      const alerts = this.opts.alerts();
      for (const alert of n.alerts) {
        if (alert.state !== 'firing') continue;
        const firedAt = alerts.notified(alert.fingerprint, a.at);
        if (firedAt !== undefined) this.opts.metrics.observeTimeToNotify(alert.labels['alertname'] ?? '', (a.at - firedAt) / 1000);
      }
    }
    const inFlight = a.outcome === 'in_flight';
    await recorder.attempt(
      {
        kind: 'attempt',
        id: a.id,
        at: a.at,
        receiver: a.receiver,
        integration: a.integration,
        status: n.status,
        fingerprints: n.alerts.map((x) => x.fingerprint),
        alerts: n.alerts.slice(0, MAX_ALERTS_RECORDED).map((x) => x.labels),
        title: titleOf(n),
        // What stays recorded if this process dies before the receiver answers (the outcome replaces it).
        outcome: a.outcome === 'in_flight' ? 'failed' : a.outcome,
        attempt: a.attempt,
        error: inFlight ? INTERRUPTED : a.error,
        duration_ms: a.durationMs,
      },
      { inFlight },
    );
  }

  /**
   * Silenced/unsilenced and inhibited/uninhibited events, and silence events (created, updated, expired), for the
   * history: the mute stage's verdict on each firing alert, compared with the last one recorded.
   */
  async mutes(alerts: readonly Alert[], notifier: Notifier, now: number): Promise<void> {
    const recorder = this.recorder;
    if (!recorder) return;
    const store = this.opts.alerts();
    for (const a of alerts) {
      if (a.state !== 'firing') continue;
      const status = notifier.alertStatus(a);
      store.setMuted(a.fingerprint, status.silencedBy, status.inhibitedBy, now);
      // Acknowledgements (contract 14): the alert's timeline, and how long it waited for someone.
      const ack = notifier.acks.ackOf(a.fingerprint);
      const firedAt = store.setAcked(a.fingerprint, ack, now, (id) => notifier.acks.get(id)?.endedBy ?? undefined);
      if (firedAt !== undefined && ack) this.opts.metrics.observeTimeToAck(a.labels['alertname'] ?? '', (ack.at - firedAt) / 1000);
    }
    try {
      await recorder.silences(notifier.silences.list(), now);
    } catch (err) {
      this.opts.logger.warn({ err: errorFields(err) }, 'silence events not journaled for the history; tried again at the next evaluation');
    }
  }

  /** TransferWatchHistoryDown: the history database has refused writes for HISTORY_DOWN_AFTER_MS. */
  applyHistoryAlert(now: number): void {
    const recorder = this.recorder;
    const history = this.opts.history;
    if (!recorder || !history) return;
    const since = recorder.failingSince;
    this.opts.metrics.setHistoryBacklog(recorder.backlog);
    this.opts.alerts().setBuiltin(historyDownCandidate(history.opened.where, recorder.backlog), since !== undefined && now - since >= HISTORY_DOWN_AFTER_MS, now);
    // TransferWatchHistoryDamaged while a damaged file is not repaired (contract 12a); history_up 0 meanwhile.
    const damage = history.damage;
    this.opts.alerts().setBuiltin(historyDamagedCandidate(history.opened.where, { reason: damage?.reason ?? '', movedTo: damage?.to ?? '', restoredFrom: damage?.restoredFrom }), damage !== undefined, now);
    if (damage) {
      this.opts.metrics.setHistoryUp(false);
      void this.care?.repairIfDamaged();
    } else if (recorder.up !== undefined) this.opts.metrics.setHistoryUp(recorder.up);
  }

  /** Scheduled SLA reports (sla.reports), sent by the leader only. */
  private startReports(): void {
    this.stopReports();
    const history = this.opts.history;
    if (!history) return;
    const reports = new SlaReportSchedules({
      config: () => this.opts.config(),
      rules: () => this.opts.rules(),
      history,
      state: this.opts.cluster.leaderState,
      clock: this.opts.clock,
      logger: this.opts.logger,
      recordAttempt: async (a) => {
        await this.recorder?.attempt(a);
      },
    });
    this.reports = reports;
    void reports.start();
  }
}
