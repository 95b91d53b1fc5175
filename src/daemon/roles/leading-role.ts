import { redisErrorFields } from '../../ha/redis-connection.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { errorFields, isFencedError } from '../../util/errors.js';
import type { Config, SourceConfig } from '../../config/schema.js';
import { LEADER_LEASE, type Cluster } from '../../cluster/cluster.js';
import { BusProgress } from '../../cluster/bus-progress.js';
import type { BusEntry } from '../../cluster/transfer-bus.js';
import { coordinationDownCandidate } from '../../alerts/coordination-down.js';
import type { HistoryRecorder } from '../../history/history-recorder.js';
import type { OccurrenceRecord } from '../../sla/occurrence.js';
import type { HistoryStore } from '../../history/history-store.js';
import type { DeliveryAttempt } from '../../notify/deliver/deliver-stage.js';
import { BusinessCalendar } from '../../sla/business-calendar.js';
import { AlertStore } from '../../alerts/alert-store.js';
import type { TransferWatchMetrics } from '../../metrics/transfer-watch-metrics.js';
import { Notifier } from '../../notify/notifier.js';
import type { SendOutcome } from '../../notify/deliver/recent-sends.js';
import type { Poller } from '../../poller/poller.js';
import type { StreamStatus } from '../../poller/poll-stream.js';
import { RESULT_OF, streamId, streamKinds } from '../../poller/stream-kind.js';
import { RuleEngine } from '../../rules/rule-engine.js';
import type { RuleDefinition } from '../../rules/registry.js';
import type { ExpectedFile } from '../../rules/rule-evaluator.js';
import type { LoadedSetup } from '../load-setup.js';
import { LeaderRecords } from './leader-records.js';
import type { HandedOverRead } from './sla-backfill.js';
import { TimeSlice, type EventLoopShare } from '../../util/time-slice.js';
import { MAX_REPLAY_MS, RuleContinuity, type UnreadSource } from './rule-continuity.js';

/** Rules are also evaluated on this tick, so `for`, deadlines and SourceDown do not wait for a poll. */
const EVALUATION_TICK_MS = 5_000;
/** How long the leader waits for new transfers on the bus before it checks it still leads. */
const BUS_READ_BLOCK_MS = 1_000;
/**
 * Windows committed faster than this (a catch-up commits many a second) are evaluated together, at most once a
 * second: a single node before roles evaluated a catch-up only on its 5 s tick and at the end of the poll cycle,
 * not at every window. (Measured: this gap does not change the shipped-rules peak RSS; the seen ids did.)
 */
const MIN_EVALUATION_GAP_MS = 1_000;

/** The board key under which the leader publishes what only it computes for the page: expected files, sends. */
export const LEADER_BOARD_KEY = 'leader';
/**
 * The board key of the leader's judgement of each source (up or not), apart from the page's entry: the status
 * API reads it on every request and must not compute every rule's expectations for it.
 */
export const SOURCES_UP_BOARD_KEY = 'sources-up';

/** What the leader publishes for every replica's page. */
export interface LeaderBoardEntry {
  expectations: ExpectedFile[];
  sends: SendOutcome[];
}

export interface LeadingRoleOptions {
  cluster: Cluster;
  clock: Clock;
  logger: Logger;
  metrics: TransferWatchMetrics;
  /** The process's event loop, shared by every long job (batches and evaluations run in slices). */
  loop: EventLoopShare;
  setup: () => LoadedSetup;
  /** A poller of one source that reads its committed cursors and re-reads history before them. */
  replayPoller: (source: SourceConfig) => Poller;
  /** Every stream of a source as its poller last published it (any replica's). */
  streamsOf: (source: string) => StreamStatus[] | undefined;
  /** Where the history is written while this process leads (contract section 12); undefined: no history. */
  history?: HistoryStore | undefined;
}

/**
 * The leading role: while this process holds the leader lease it rebuilds the rule windows from history, reads
 * the transfer bus, evaluates rules and source health, keeps the alert state and sends notifications. Without
 * the lease it follows: alerts and silences as the leader wrote them, for the page and the API.
 *
 * Order matters for "no notification lost or repeated": rules are evaluated only after their windows were
 * rebuilt from history, the alert store restores identities and `activeAt` before the first evaluation, and
 * the notifier (with its persisted log and outbox) receives the whole alert set after every evaluation.
 */
export class LeadingRole {
  alerts!: AlertStore;
  notifier!: Notifier;
  private engine!: RuleEngine;
  /** During a reload the next engine is fed live transfers while its windows are rebuilt. */
  private nextEngine: RuleEngine | undefined;
  private progress!: BusProgress;
  /**
   * The current rule engine knows history from here on (the start of the history replayed into it); windows
   * that began earlier are not judged, so a missing file is never claimed on data the engine never saw.
   */
  private engineFrom: number | undefined;
  private leadingNow = false;
  /** Changes at every leadership change, so work of an old leadership stops. */
  private leadership = 0;
  private storeDownSince: number | undefined;
  private listenUrl: string | undefined;
  private evaluating: Promise<void> | undefined;
  private evaluateAgain = false;
  private tick: NodeJS.Timeout | undefined;
  private wakeup: NodeJS.Timeout | undefined;
  /** A deferred evaluation of windows committed within MIN_EVALUATION_GAP_MS of the last one. */
  private soon: NodeJS.Timeout | undefined;
  private lastEvaluatedAt = Number.NEGATIVE_INFINITY;
  private stopping = false;
  /** What the leader writes to the history and the ledger, and the scheduled SLA reports. */
  /** What this process writes down while it leads; its re-judgement and given-up windows' reads serve the API on any replica. */
  readonly records: LeaderRecords;
  /** How the rules' state is taken up by this process (see RuleContinuity). */
  private readonly continuity: RuleContinuity;

  constructor(private readonly opts: LeadingRoleOptions) {
    this.continuity = new RuleContinuity({ config: () => this.config, clock: opts.clock, logger: opts.logger, replayPoller: opts.replayPoller, history: opts.history });
    this.records = new LeaderRecords({
      history: opts.history,
      cluster: opts.cluster,
      clock: opts.clock,
      logger: opts.logger,
      metrics: opts.metrics,
      config: () => this.config,
      rules: () => this.opts.setup().rules,
      replayPoller: opts.replayPoller,
      alerts: () => this.alerts,
      adoptBackfill: (read) => this.adoptBackfill(read),
      handOverSpan: () => Math.min(this.engine.historyNeeded(), MAX_REPLAY_MS),
    });
  }

  /**
   * The end of the SLA backfill's read of a source: the rules take its transfers and judge on the span it read, so
   * at a first start a deadline whose window began before the first poll is judged (not lost), and one the backfill
   * left open is finished live (a file after it turns it late within a poll).
   */
  private adoptBackfill(read: HandedOverRead): void {
    if (!this.leadingNow) return;
    for (const t of read.transfers) {
      this.engine.observe(t);
      this.nextEngine?.observe(t);
    }
    this.progress.adoptRead(read.source, read.from, read.until);
    if (this.engineFrom !== undefined && this.engineFrom <= read.until) this.engineFrom = Math.min(this.engineFrom, read.from);
    void this.evaluate();
  }

  /** The history writer of this leadership, if leading with a history. */
  get history(): HistoryRecorder | undefined {
    return this.leadingNow ? this.records.current : undefined;
  }

  get leading(): boolean {
    return this.leadingNow;
  }

  private get config(): Config {
    return this.opts.setup().config;
  }

  private get logger(): Logger {
    return this.opts.logger;
  }

  /** Restore alerts and the notifier's state (as a follower until the leader lease comes) and start the tick. */
  async init(): Promise<void> {
    const { metrics } = this.opts;
    this.alerts = new AlertStore({
      clock: this.opts.clock,
      logger: this.logger,
      state: this.opts.cluster.leaderState,
      recordHistory: this.records.enabled,
      onResolved: (alert, at) => {
        if (alert.firedAt !== undefined) metrics.observeAlertDuration(alert.labels['alertname'] ?? '', (at - alert.firedAt) / 1000);
      },
    });
    await this.alerts.restore();
    this.engine = this.newEngine(this.opts.setup().rules);
    this.progress = this.newProgress();
    this.notifier = this.newNotifier();
    await this.notifier.restore();
    this.tick = setInterval(() => void this.evaluate(), EVALUATION_TICK_MS);
    this.tick.unref();
  }

  /** Links in messages (and Alertmanager's generatorURL) name the bound port, not a configured port 0. */
  setListenUrl(url: string): void {
    this.listenUrl = url;
    this.notifier.setListenUrl(url);
  }

  /**
   * The leader lease is ours: take the alert state, the notification log and the outbox over (a dead leader's
   * outbox is delivered from here), rebuild the rule windows from history, then read the transfer bus from
   * where the last leader stopped.
   */
  async takeOver(): Promise<void> {
    const { cluster, logger } = this.opts;
    if (this.stopping) return;
    const epoch = ++this.leadership;
    this.notifier.halt();
    await this.alerts.restore();
    const recorder = await this.records.open();
    const notifier = this.newNotifier(recorder);
    await notifier.restore();
    const rules = this.opts.setup().rules;
    const seams = await this.continuity.seams(rules);
    const engine = this.newEngine(rules, seams);
    // Every source's cursors as committed: the history replayed reaches them, so rules saw what they say.
    this.progress = this.newProgress();
    const rebuilt = await this.rebuild(engine, seams);
    const from = rebuilt.from;
    const consumed = await cluster.bus.consumed();
    if (epoch !== this.leadership || !cluster.coordinator.holds(LEADER_LEASE)) {
      await recorder?.stop();
      return notifier.halt();
    }
    this.records.begin(recorder, rebuilt.at);
    this.engine = engine;
    this.engineFrom = from;
    this.notifier = notifier;
    this.leadingNow = true;
    cluster.board.publish(LEADER_BOARD_KEY, () => this.boardEntry());
    cluster.board.publish(SOURCES_UP_BOARD_KEY, () => this.sourcesUp());
    logger.info({ role: 'leader', lease: LEADER_LEASE, replica: cluster.replica, from: consumed }, 'leading: evaluating rules and sending notifications');
    await this.evaluate();
    notifier.start();
    void this.consume(consumed, epoch);
    this.records.startJobs(() => this.leads(epoch));
    this.rereadFailed(rebuilt, epoch);
  }

  /** Rebuild an engine's windows (see RuleContinuity.rebuild), the cursors as committed seeding the progress. */
  private async rebuild(engine: RuleEngine, seams: ReadonlyMap<string, number>): Promise<{ from: number | undefined; failed: UnreadSource[]; span: number; at: number }> {
    const at = this.opts.clock.now();
    const span = this.continuity.span(engine, seams, engine.rules);
    const rebuilt = await this.continuity.rebuild(engine, span, (t) => this.records.observeFlow(t));
    this.progress.seed(rebuilt.progress);
    return { from: rebuilt.from, failed: rebuilt.failed, span, at };
  }

  /** The sources a rebuild could not re-read are read again in the background; their windows are judged once they are. */
  private rereadFailed(rebuilt: { failed: UnreadSource[]; span: number; at: number }, epoch: number): void {
    if (rebuilt.failed.length === 0) return;
    this.continuity.rereadFailed(
      rebuilt.failed,
      rebuilt.span,
      rebuilt.at,
      () => this.engine,
      () => this.leads(epoch),
      (from) => {
        if (this.engineFrom !== undefined) this.engineFrom = Math.min(this.engineFrom, from);
        void this.evaluate();
      },
    );
  }

  /** Whether leadership `epoch` is still this process's (work of an old one stops). */
  private leads(epoch: number): boolean {
    return this.leadingNow && epoch === this.leadership && !this.stopping;
  }

  /** Read the bus in order until leadership changes; each batch is applied, then evaluated and marked read. */
  private async consume(afterId: string, epoch: number): Promise<void> {
    const { cluster, logger } = this.opts;
    const current = (): boolean => this.leads(epoch);
    let last = afterId;
    while (current()) {
      let entries: BusEntry[];
      try {
        entries = await cluster.bus.read(last, BUS_READ_BLOCK_MS);
      } catch (err) {
        logger.warn({ role: 'leader', lease: LEADER_LEASE, err: redisErrorFields(err) }, 'cannot read the transfer stream; retrying');
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (entries.length === 0 || !current()) continue;
      let progressed = false;
      // A batch is a page or more per stream, each transfer to every rule: in slices, so that a scrape or a
      // health check during a catch-up is answered in between (src/util/time-slice.ts).
      const slice = new TimeSlice(this.opts.loop);
      for (const e of entries) {
        if ('transfers' in e) {
          for (const t of e.transfers) {
            if (slice.spent()) {
              await slice.yield();
              // Leadership may have gone meanwhile: what is left is the next leader's to read.
              if (!current()) return;
            }
            this.engine.observe(t);
            this.nextEngine?.observe(t);
            this.records.observeFlow(t);
          }
        } else {
          this.progress.apply(e.progress);
          progressed = true;
        }
      }
      last = entries[entries.length - 1]?.id ?? last;
      // A window's transfers are judged when its progress marker comes (the window is read whole); the tick
      // evaluates anyway, so a batch without one waits at most a tick.
      if (progressed) await this.evaluateWindows();
      if (epoch === this.leadership) {
        await cluster.bus.markConsumed(cluster.coordinator.fence(LEADER_LEASE), last).catch((err: unknown) => {
          logger.warn({ role: 'leader', lease: LEADER_LEASE, err: errorFields(err) }, 'cannot record how far the transfer stream was read');
        });
      }
    }
  }

  /** The leader lease is gone (taken over, expired in a pause, or given back): stop evaluating and sending at once. */
  stepDown(why: string): void {
    if (!this.leadingNow) return;
    this.leadingNow = false;
    this.leadership++;
    this.withdrawFromBoard();
    this.notifier.halt();
    this.records.end();
    this.notifier = this.newNotifier();
    void this.notifier.reloadSilences().catch(() => undefined);
    this.logger.warn({ role: 'leader', lease: LEADER_LEASE, why }, 'no longer leading: rules and notifications are left to the holder of the leader lease');
  }

  /** Followers refresh alerts and silences as the leader and the other replicas wrote them. */
  async follow(): Promise<void> {
    if (this.stopping) return;
    if (!this.leadingNow) {
      try {
        await this.alerts.restore({ quiet: true });
        await this.notifier.reloadSilences();
        this.notifier.update(this.alerts.alerts());
      } catch {
        /* the store is down: keep the last view; the coordination alert says so */
      }
      this.applyCoordinationAlert(this.opts.clock.now());
    }
  }

  /** The shared store answered or not (the coordination alert fires after it was down for its delay). */
  setStoreUp(up: boolean): void {
    if (up) this.storeDownSince = undefined;
    else this.storeDownSince ??= this.opts.clock.now();
  }

  /** The store came back empty: write back silences, and while leading the alert state, log and outbox. */
  async writeBack(): Promise<string[]> {
    const what = ['silences'];
    this.notifier.rewriteState();
    if (this.leadingNow) {
      await this.alerts.flush({ force: true }).catch(() => undefined);
      what.push('alert state', 'notification log', 'outbox');
    }
    return what;
  }

  /** Evaluate rules and source health, update alerts, hand the alert set to the notifier. Never runs twice at once. */
  evaluate(): Promise<void> {
    if (this.stopping || !this.leadingNow) return Promise.resolve();
    if (this.evaluating) {
      this.evaluateAgain = true;
      return this.evaluating;
    }
    this.evaluating = this.evaluateOnce()
      .catch((err: unknown) => this.logger.error({ err: errorFields(err) }, 'evaluation failed'))
      .finally(() => {
        this.evaluating = undefined;
        if (this.evaluateAgain) {
          this.evaluateAgain = false;
          void this.evaluate();
        }
      });
    return this.evaluating;
  }

  /** Evaluate committed windows now, or within MIN_EVALUATION_GAP_MS of the last evaluation (a catch-up). */
  private async evaluateWindows(): Promise<void> {
    const wait = this.lastEvaluatedAt + MIN_EVALUATION_GAP_MS - performance.now();
    if (wait <= 0) return this.evaluate();
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.evaluate();
    }, wait);
    this.soon.unref();
  }

  private completeness(): { completeUntil: BusProgress['completeUntil']; completeFrom: BusProgress['completeFrom'] } {
    return {
      completeUntil: (source, result) => this.progress.completeUntil(source, result),
      completeFrom: (source, result) => {
        const from = this.progress.completeFrom(source, result);
        return from === undefined ? undefined : Math.max(from, this.engineFrom ?? from);
      },
    };
  }

  /**
   * How a source stands: down when no healthy poll came within stale_after (TransferWatchSourceDown), and the
   * first of its streams whose last cycle failed. Up is neither.
   */
  private sourceHealth(source: string, now: number): { down: boolean; failing: StreamStatus | undefined } {
    return {
      down: now - this.progress.lastHealthy(source) >= this.config.poll.stale_after,
      failing: (this.opts.streamsOf(source) ?? []).find((s) => s.lastError !== null),
    };
  }

  private async evaluateOnce(): Promise<void> {
    this.lastEvaluatedAt = performance.now();
    const now = this.opts.clock.now();
    const { metrics, cluster } = this.opts;
    // Asked first: a process woken from a pause past its lease learns here that it is gone (and steps down, saying
    // so) before it evaluates or writes anything.
    if (!this.leadingNow || !cluster.coordinator.holds(LEADER_LEASE)) return;
    const evaluations = await this.engine.evaluateInSlices(now, this.completeness());
    // The lease may have gone during a turn between rules: what was evaluated is the next leader's to judge.
    if (!this.leadingNow) return;
    this.alerts.apply(evaluations, now);
    for (const source of this.config.sources) {
      const { down, failing } = this.sourceHealth(source.name, now);
      this.alerts.setSourceDown(source.name, down, now, failing?.lastError ? `last error: ${failing.lastError.reason}` : undefined);
      metrics.setSourceUp(source.name, !failing && !down);
    }
    this.applyCoordinationAlert(now);
    this.records.applyHistoryAlert(now);
    const all = this.alerts.alerts();
    metrics.setAlerts(all);
    this.notifier.update(all);
    await this.records.mutes(all, this.notifier, now);
    metrics.setStateWriteOk(cluster.leaderState.lastWriteOk);
    try {
      await this.alerts.flush();
    } catch (err) {
      if (isFencedError(err)) {
        this.logger.warn({ role: 'leader', lease: LEADER_LEASE, err: errorFields(err) }, 'alert state not saved: fenced (the leader lease is not ours any more)');
      } else {
        this.logger.error({ role: 'leader', err: errorFields(err), state: cluster.description.state }, 'could not persist alert state: the state store refused the write');
      }
    }
    metrics.setStateWriteOk(cluster.leaderState.lastWriteOk);
    // After the snapshot: the alert events it journaled are durable before they are written to the database.
    this.records.drain();
    this.scheduleWakeup(now);
  }

  /** Deadlines and `warn_before` times are evaluated on time, not on the next tick. */
  private scheduleWakeup(now: number): void {
    const at = this.engine.nextWakeup(now);
    if (this.wakeup) clearTimeout(this.wakeup);
    this.wakeup = undefined;
    if (at === undefined || at - now > EVALUATION_TICK_MS) return;
    this.wakeup = setTimeout(() => void this.evaluate(), Math.max(0, at - now) + 5);
    this.wakeup.unref();
  }

  private applyCoordinationAlert(now: number): void {
    const { description, replica } = this.opts.cluster;
    if (description.storeDownAlertAfterMs === undefined || description.storeUrl === undefined) return;
    const down = this.storeDownSince !== undefined && now - this.storeDownSince >= description.storeDownAlertAfterMs;
    this.alerts.setBuiltin(coordinationDownCandidate(replica, description.storeUrl), down, now);
  }

  private boardEntry(): LeaderBoardEntry {
    return { expectations: this.engine.expectations(this.opts.clock.now(), this.completeness()), sends: this.notifier.recentSends() };
  }

  /** Whether each source is up, as TransferWatchSourceDown and source_up judge it. */
  private sourcesUp(): Record<string, boolean> {
    const now = this.opts.clock.now();
    return Object.fromEntries(
      this.config.sources.map((s) => {
        const { down, failing } = this.sourceHealth(s.name, now);
        return [s.name, !down && !failing];
      }),
    );
  }

  /**
   * Rules, templates or receivers changed: a new engine is fed live transfers while its windows are rebuilt
   * from history, then replaces the old one; alerts of removed rules resolve.
   */
  async reload(next: LoadedSetup): Promise<void> {
    const { clock } = this.opts;
    // Sources added or removed (a cluster of one applies them at once): completeness asks for the new set.
    this.progress.setExpected(expectedStreams(next.config));
    const seams = this.leadingNow ? await this.continuity.seams(next.rules) : new Map<string, number>();
    const engine = this.newEngine(next.rules, seams);
    this.nextEngine = engine;
    let from: number | undefined;
    try {
      if (this.leadingNow) {
        const rebuilt = await this.rebuild(engine, seams);
        from = rebuilt.from;
        this.rereadFailed(rebuilt, this.leadership);
      } else from = clock.now();
    } finally {
      this.nextEngine = undefined;
    }
    this.engine = engine;
    this.engineFrom = from;
    this.alerts.retainRules(next.rules.map((r) => r.name), clock.now());
    this.notifier.reload(next.config, next.templates);
    // A missing_file rule added by the reload is filled from the service history (sla.backfill).
    if (this.leadingNow) void this.records.backfill(() => this.leads(this.leadership));
  }

  /**
   * Shutdown: evaluate what is left, then save the alert state and deliver what can be within `graceMs`. Returns how
   * many history records were left unwritten (kept in the journal).
   */
  async stop(graceMs: number): Promise<number> {
    let unwritten = 0;
    await this.evaluating;
    this.stopping = true;
    if (this.tick) clearInterval(this.tick);
    if (this.wakeup) clearTimeout(this.wakeup);
    if (this.soon) clearTimeout(this.soon);
    if (this.leadingNow) {
      await this.alerts.flush({ force: true }).catch((err: unknown) => this.logger.error({ err: errorFields(err) }, 'could not persist alert state at shutdown'));
      await this.notifier.stop(graceMs);
      unwritten = await this.records.close();
    } else {
      this.notifier.halt();
    }
    this.stepDownQuietly();
    return unwritten;
  }

  /** Leadership ends with the process: nothing to announce. */
  private stepDownQuietly(): void {
    this.records.stopReports();
    this.leadingNow = false;
    this.leadership++;
    this.withdrawFromBoard();
  }

  private withdrawFromBoard(): void {
    this.opts.cluster.board.withdraw(LEADER_BOARD_KEY);
    this.opts.cluster.board.withdraw(SOURCES_UP_BOARD_KEY);
  }

  /** A rule engine; `seams`: each missing_file rule's last deadline in the ledger (see RuleContinuity.seams). */
  private newEngine(rules: RuleDefinition[], seams: ReadonlyMap<string, number> = new Map()): RuleEngine {
    const holdFrom = this.continuity.holdFrom(seams, rules);
    return new RuleEngine(rules, {
      clock: this.opts.clock,
      logger: this.logger,
      sources: this.config.sources.map((s) => s.name),
      displayTimezone: this.config.display_timezone,
      calendars: new Map(Object.entries(this.config.calendars).map(([name, c]) => [name, new BusinessCalendar(c)])),
      loop: this.opts.loop,
      usualArrival: (rule, key) => this.records.usual.get(rule, key),
      ...(this.records.enabled
        ? {
            onOccurrence: (o: OccurrenceRecord, how?: { seam: true }) => {
              if (this.leadingNow) this.records.occurrence(o, how);
            },
            ledgerSeam: (rule: string) => seams.get(rule),
            ...(holdFrom !== undefined ? { holdFrom } : {}),
          }
        : {}),
    });
  }

  private newProgress(): BusProgress {
    return new BusProgress(expectedStreams(this.config), this.opts.clock.now());
  }

  private newNotifier(recorder?: HistoryRecorder): Notifier {
    const { clock, logger, metrics, cluster } = this.opts;
    const setup = this.opts.setup();
    const notifier = new Notifier({
      config: setup.config,
      clock,
      logger,
      state: cluster.leaderState,
      templates: setup.templates,
      hooks: {
        onNotification: (receiver, integration, outcome) => metrics.observeNotification(receiver, integration, outcome),
        onQueueLength: (n) => metrics.setNotificationQueueLength(n),
        ...(recorder ? { onAttempt: (a: DeliveryAttempt) => this.records.attempt(recorder, a) } : {}),
      },
      silenceState: cluster.sharedState,
      onSilencesChanged: () => void cluster.silencesChanged(),
      // Acknowledgements are shared as silences are, and their changes told on the same signal.
      ackState: cluster.sharedState,
      onAcksChanged: () => void cluster.silencesChanged(),
      // In each alert's timeline (journaled with the alert state, written to the history with it).
      onEscalated: (e) => this.alerts.escalated(e.fingerprints, { step: e.step, of: e.of, receiver: e.receiver, since: e.since }, e.at),
      // Exactly one sender: only while the leader lease is ours, as the store says right before the send.
      claim: () => cluster.coordinator.confirm(LEADER_LEASE),
    });
    if (this.listenUrl) notifier.setListenUrl(this.listenUrl);
    return notifier;
  }
}

/** The streams every source has (kinds × instances), by source, as the pollers name them. */
function expectedStreams(config: Config): Map<string, Array<{ stream: string; result: 'success' | 'error' }>> {
  const out = new Map<string, Array<{ stream: string; result: 'success' | 'error' }>>();
  for (const source of config.sources) {
    const instances: Array<string | undefined> = source.instances.length > 0 ? source.instances : [undefined];
    out.set(
      source.name,
      streamKinds(config.poll).flatMap((kind) => instances.map((i) => ({ stream: streamId(source.name, kind, i), result: RESULT_OF[kind] }))),
    );
  }
  return out;
}
