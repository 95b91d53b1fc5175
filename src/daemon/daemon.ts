import { mkdir } from 'node:fs/promises';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { errorFields, errorMessage } from '../util/errors.js';
import type { Config, SourceConfig } from '../config/schema.js';
import { FileStateStore } from '../state/file-state-store.js';
import { StateDirLock } from '../state/state-dir-lock.js';
import type { StateStore } from '../state/state-store.js';
import { coordinationDownCandidate } from '../alerts/coordination-down.js';
import { BusProgress } from '../ha/bus-progress.js';
import { HaCluster } from '../ha/ha-cluster.js';
import { LEADER_LEASE } from '../ha/lease-coordinator.js';
import { redisUrlForDisplay } from '../ha/redis-connection.js';
import { SourcePollState } from '../ha/source-poll-state.js';
import type { StreamProgress } from '../ha/transfer-bus.js';
import { RESULT_OF } from '../poller/stream-kind.js';
import { TransferHistoryClient } from '../source/transfer-history-client.js';
import type { Transfer } from '../source/transfer.js';
import { Poller } from '../poller/poller.js';
import type { PollStream } from '../poller/poll-stream.js';
import { RuleEngine } from '../rules/rule-engine.js';
import type { RuleDefinition } from '../rules/registry.js';
import { AlertStore } from '../alerts/alert-store.js';
import type { Alert } from '../alerts/alert.js';
import { Notifier } from '../notify/notifier.js';
import { createAlertmanagerView } from './alertmanager-view.js';
import { ApiTimeShift } from '../http/api-time-shift.js';
import type { SilenceApi } from '../http/daemon-api.js';
import { configuredIntegrationKinds } from '../notify/integrations/registry.js';
import { TransferWatchMetrics } from '../metrics/transfer-watch-metrics.js';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.js';
import { HttpSecurity } from '../http/security/http-security.js';
import type { StatusPageData } from '../http/status-page/status-page-data.js';
import type { LoadedSetup } from './load-setup.js';

/** Rule windows are rebuilt from at most this much history after a restart or reload, whatever a rule asks. */
const MAX_REPLAY_MS = 2 * 86_400_000;
/** Rules are also evaluated on this tick, so `for`, deadlines and SourceDown do not wait for a poll. */
const EVALUATION_TICK_MS = 5_000;
/** SIGTERM must end within 10 s (contract); leave room for the HTTP close and the exit itself. */
const SHUTDOWN_POLL_GRACE_MS = 6_000;
const SHUTDOWN_NOTIFY_GRACE_MS = 2_500;

export interface DaemonOptions {
  /** Loads config and rules; called at start and at each reload. Throws on invalid input. */
  load: () => Promise<LoadedSetup>;
  clock: Clock;
  logger: Logger;
  version: string;
  /** Override server.listen (the demo picks its own port). */
  listen?: string;
  /**
   * How far `clock` runs ahead of the wall clock (the demo's simulated morning): times in the JSON API are
   * translated by it, because its clients (amtool, the CLI) live on the wall clock. 0 by default.
   */
  apiTimeOffsetMs?: number;
}

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
}

/**
 * The daemon: wires config, poller, rule engine, alert store, notifier, metrics and HTTP together, and owns
 * the order of start-up, evaluation, reload and shutdown.
 *
 * Order matters for "no notification lost or repeated": rules are evaluated only after rule windows were rebuilt
 * from history, the alert store restores identities and `activeAt` before the first evaluation, and the
 * notifier (with its persisted log and outbox) receives the whole alert set after every evaluation.
 */
/** What the daemon needs of its state store besides the interface: health for the status API and metrics. */
type DaemonStateStore = StateStore & { lastWriteOk: boolean; lastWriteError: string | undefined; close(): Promise<void> };

/** How far each source's history is read: the local poller (one process) or the leader's view of the stream (HA). */
interface SourceProgress {
  completeUntil(source: string, result: 'success' | 'error'): number | undefined;
  completeFrom(source: string, result: 'success' | 'error'): number | undefined;
  lastHealthy(source: string): number;
}

/** Followers refresh their view of alerts and silences from Redis this often. */
const HA_VIEW_REFRESH_MS = 1_000;

export class Daemon {
  private setup!: LoadedSetup;
  private state!: DaemonStateStore;
  /** Without `ha:`: the lock that keeps a second process off this state.dir. */
  private lock: StateDirLock | undefined;
  /** With `ha:`: the shared Redis, the leases and the transfer stream. */
  private cluster: HaCluster | undefined;
  /** With `ha:`: the pollers of the sources whose lease this replica holds. */
  private readonly sourcePollers = new Map<string, { poller: Poller; state: SourcePollState }>();
  /** Whether this process evaluates rules and notifies: always without `ha:`, the leader lease holder with it. */
  private leading = false;
  /** Changes at every leadership change, so work of an old leadership stops. */
  private leadership = 0;
  private progress!: SourceProgress;
  private redisDownSince: number | undefined;
  private haView: NodeJS.Timeout | undefined;
  private leaseHolders: Record<string, string | null> = {};
  private metrics!: TransferWatchMetrics;
  private alerts!: AlertStore;
  private engine!: RuleEngine;
  /** During a reload the next engine is fed live transfers while its windows are rebuilt. */
  private nextEngine: RuleEngine | undefined;
  private notifier!: Notifier;
  private poller!: Poller;
  private http: RunningHttpServer | undefined;
  private ready = false;
  private stopping = false;
  private evaluating: Promise<void> | undefined;
  private evaluateAgain = false;
  private tick: NodeJS.Timeout | undefined;
  private wakeup: NodeJS.Timeout | undefined;
  /**
   * The current rule engine knows history from here on (the start of the history replayed into it); windows
   * that began earlier are not judged, so a missing file is never claimed on data the engine never saw.
   */
  private engineFrom: number | undefined;
  private lastReload: { ok: boolean; at: number; error?: string } | undefined;
  private readonly startedAt: number;

  constructor(private readonly opts: DaemonOptions) {
    this.startedAt = opts.clock.now();
  }

  get url(): string | undefined {
    return this.http?.url;
  }

  get config(): Config {
    return this.setup.config;
  }

  private get logger(): Logger {
    return this.opts.logger;
  }

  async start(): Promise<void> {
    const { clock, logger } = this.opts;
    this.setup = await this.opts.load();
    const config = this.setup.config;
    const sourceNames = config.sources.map((s) => s.name);

    // The poller hands each transfer on once (per-stream dedup across overlaps and abandoned windows), so the
    // metrics' own id memory (100,000 ids) would be redundant.
    this.metrics = new TransferWatchMetrics({
      maxSeries: config.metrics.max_series,
      version: this.opts.version,
      ...(config.ha ? { haLeases: [LEADER_LEASE, ...sourceNames] } : {}),
    });
    if (config.ha) {
      this.cluster = await HaCluster.connect(config.ha, logger, sourceNames, {
        onLeaseAcquired: (lease) => this.onLeaseAcquired(lease),
        onLeaseLost: (lease) => this.onLeaseLost(lease),
        onRedisUp: (up) => this.onRedisUp(up),
        onRedisReset: () => void this.writeBack(),
        onSilencesChanged: () => void this.notifier.reloadSilences().catch(() => undefined),
      });
      this.state = this.cluster.leaderState;
    } else {
      this.lock = StateDirLock.acquire(await ensureDir(config.state.dir));
      const fileState = new FileStateStore(config.state.dir, logger, clock);
      await fileState.init();
      this.state = fileState;
    }

    this.alerts = new AlertStore({ clock, logger, state: this.state });
    await this.alerts.restore();
    this.engine = this.newEngine(this.setup.rules);
    this.notifier = this.newNotifier();
    await this.notifier.restore();
    this.initReceiverMetrics();

    let restarted = false;
    if (!this.cluster) {
      this.poller = this.newPoller(config);
      this.progress = this.poller;
      restarted = await this.poller.restore();
    }

    // Serve health and metrics while windows are rebuilt; /readyz says 503 until then.
    const listen = this.opts.listen ?? config.server.listen;
    const loopbackOnly = /^(127\.|\[::1\]:|localhost:)/.test(listen);
    if (!this.setup.webConfig?.authenticates && !loopbackOnly) {
      logger.warn(
        'no server.web_config_file with authentication: reads are open, and writes (silences, reload) are accepted from this machine (loopback) only; see docs/security.md',
      );
    }
    // Through this.notifier at call time: with ha: the notifier is replaced when leadership changes.
    const silences: SilenceApi = {
      list: () => this.notifier.silences.list(),
      get: (id: string) => this.notifier.silences.get(id),
      create: (input: unknown) => this.notifier.silences.create(input),
      expire: (id: string) => this.notifier.silences.expire(id),
    };
    const apiTime = new ApiTimeShift(this.opts.apiTimeOffsetMs ?? 0);
    this.http = await startHttpServer({
      listen: this.opts.listen ?? config.server.listen,
      logger,
      metrics: this.metrics,
      security: this.httpSecurity(),
      ...(this.setup.webConfig?.tls ? { tls: this.setup.webConfig.tls } : {}),
      api: {
        ready: () => this.ready && !this.stopping,
        alerts: () => apiTime.out(this.apiAlerts()),
        status: () => this.status(),
        reload: () => this.reload(),
        silences: apiTime.silenceApi(silences),
        pageSilences: silences,
        alertmanager: apiTime.alertmanagerView(createAlertmanagerView({
          now: () => clock.now(),
          startedAt: this.startedAt,
          version: this.opts.version,
          config: () => this.setup.config,
          firingAlerts: () => this.alerts.alerts().filter((a) => a.state === 'firing'),
          status: (a) => this.notifier.alertStatus(a),
          receiversOf: (a) => this.notifier.receiversOf(a),
          groups: () => this.notifier.alertGroups(),
          silences: () => this.notifier.silences.list(),
        })),
        statusPage: () => this.statusPageData(),
      },
    });
    logger.info({ url: this.http.url }, 'HTTP server listening');
    // Links in messages (and Alertmanager's generatorURL) name the bound port, not a configured port 0.
    this.notifier.setListenUrl(this.http.url);

    this.metrics.setConfigReload(true, clock.now());
    this.lastReload = { ok: true, at: clock.now() };
    if (this.cluster) {
      // Leases decide what this replica does; until the leader lease comes, it serves the shared view.
      this.ready = true;
      await this.cluster.coordinator.start();
      this.haView = setInterval(() => void this.refreshHaView(), HA_VIEW_REFRESH_MS);
      this.haView.unref();
      this.tick = setInterval(() => void this.evaluate(), EVALUATION_TICK_MS);
      this.tick.unref();
      return;
    }
    if (restarted) this.engineFrom = await this.replayInto(this.engine);
    this.leading = true;
    this.ready = true;

    await this.evaluate();
    this.poller.start();
    this.notifier.start();
    this.tick = setInterval(() => void this.evaluate(), EVALUATION_TICK_MS);
    this.tick.unref();
  }

  /** Authentication, write rules and headers of the HTTP server, from the current setup. */
  private httpSecurity(): HttpSecurity {
    const server = this.setup.config.server;
    const external = server.external_url ? [new URL(server.external_url).hostname] : [];
    return new HttpSecurity({
      webConfig: this.setup.webConfig,
      allowedHosts: [...server.allowed_hosts, ...external],
      logger: this.logger,
      onAuthFailure: () => this.metrics.addHttpAuthFailure(),
    });
  }

  private newNotifier(): Notifier {
    const { clock, logger } = this.opts;
    const cluster = this.cluster;
    const notifier = new Notifier({
      config: this.setup.config,
      clock,
      logger,
      state: this.state,
      templates: this.setup.templates,
      hooks: {
        onNotification: (receiver, integration, outcome) => this.metrics.observeNotification(receiver, integration, outcome),
        onQueueLength: (n) => this.metrics.setNotificationQueueLength(n),
      },
      ...(cluster
        ? {
            silenceState: cluster.sharedState,
            onSilencesChanged: () => void cluster.silencesChanged(),
            // Exactly one sender: only while the leader lease is ours, as Redis says right before the send.
            claim: () => cluster.coordinator.confirm(LEADER_LEASE),
          }
        : {}),
    });
    if (this.http) notifier.setListenUrl(this.http.url);
    return notifier;
  }

  // --- high availability (ha:) ------------------------------------------------------------------------

  private onLeaseAcquired(lease: string): void {
    const source = lease.startsWith('source:') ? lease.slice('source:'.length) : undefined;
    this.metrics.setLeaseHeld(source ?? LEADER_LEASE, true);
    if (source !== undefined) void this.startSourcePoller(source);
    else if (lease === LEADER_LEASE) void this.becomeLeader();
  }

  private onLeaseLost(lease: string): void {
    const source = lease.startsWith('source:') ? lease.slice('source:'.length) : undefined;
    this.metrics.setLeaseHeld(source ?? LEADER_LEASE, false);
    if (source !== undefined) void this.stopSourcePoller(source);
    else if (lease === LEADER_LEASE) this.stepDown();
  }

  private onRedisUp(up: boolean): void {
    this.metrics.setRedisUp(up);
    if (up) this.redisDownSince = undefined;
    else this.redisDownSince ??= this.opts.clock.now();
  }

  /** Redis restarted empty: write back what this replica holds, so the cluster continues where it was. */
  private async writeBack(): Promise<void> {
    const what: string[] = ['silences'];
    this.notifier.rewriteState();
    if (this.leading) {
      await this.alerts.flush({ force: true }).catch(() => undefined);
      what.push('alert state', 'notification log', 'outbox');
    }
    for (const [, p] of this.sourcePollers) await p.poller.save().catch(() => undefined);
    if (this.sourcePollers.size > 0) what.push(`cursors of ${[...this.sourcePollers.keys()].join(', ')}`);
    this.logger.warn({ rebuilt: what }, 'Redis had lost its data: wrote back what this replica holds');
  }

  private async startSourcePoller(name: string): Promise<void> {
    const cluster = this.cluster;
    const source = this.setup.config.sources.find((s) => s.name === name);
    if (!cluster || !source || this.sourcePollers.has(name) || this.stopping) return;
    const state = new SourcePollState({
      source: name,
      bus: cluster.bus,
      store: cluster.sourceStore(name),
      fence: () => cluster.coordinator.fence(`source:${name}`),
      progress: () => streamProgress(this.sourcePollers.get(name)?.poller),
    });
    const poller = this.newPoller({ ...this.setup.config, sources: [source] }, state, (t) => {
      this.metrics.observeTransfer(t);
      state.add(t);
    });
    this.sourcePollers.set(name, { poller, state });
    await poller.restore();
    // Lost again while restoring: leave it to the next holder.
    if (this.sourcePollers.get(name)?.poller !== poller) return;
    this.logger.info({ source: name }, 'polling this source (its lease is ours)');
    poller.start();
  }

  private async stopSourcePoller(name: string): Promise<void> {
    const entry = this.sourcePollers.get(name);
    if (!entry) return;
    this.sourcePollers.delete(name);
    // Its last commit is refused by the fence if the lease is someone else's; the next holder reads the window again.
    await entry.poller.stop(500).catch(() => undefined);
    this.logger.info({ source: name }, 'stopped polling this source (lease given up)');
  }

  /**
   * The leader lease is ours: take the alert state, the notification log and the outbox over from Redis (a dead
   * leader's outbox is delivered from here), rebuild the rule windows from history, then read the transfer stream
   * from where the last leader stopped.
   */
  private async becomeLeader(): Promise<void> {
    const cluster = this.cluster;
    if (!cluster || this.stopping) return;
    const epoch = ++this.leadership;
    const { clock, logger } = this.opts;
    const config = this.setup.config;
    this.notifier.halt();
    await this.alerts.restore();
    const notifier = this.newNotifier();
    await notifier.restore();
    const engine = this.newEngine(this.setup.rules);
    const progress = new BusProgress(expectedStreams(config), clock.now());
    // Every source's cursors as committed: the history replayed reaches them, so rules saw what they say.
    this.progress = progress;
    const from = await this.replayAll(engine);
    const consumed = await cluster.bus.consumed();
    if (epoch !== this.leadership || !cluster.isLeader()) return notifier.halt();
    this.engine = engine;
    this.engineFrom = from;
    this.notifier = notifier;
    this.leading = true;
    logger.info({ replica: cluster.config.replica_name, from: consumed }, 'leading: evaluating rules and sending notifications');
    await this.evaluate();
    notifier.start();
    void cluster.consume(consumed, () => this.leading && epoch === this.leadership, async (entries) => {
      let last: string | undefined;
      for (const e of entries) {
        if ('transfers' in e) {
          for (const t of e.transfers) {
            this.engine.observe(t);
            this.nextEngine?.observe(t);
          }
        } else {
          progress.apply(e.progress);
        }
        last = e.id;
      }
      await this.evaluate();
      if (last !== undefined && epoch === this.leadership) {
        await cluster.bus.markConsumed(cluster.coordinator.fence(LEADER_LEASE), last).catch((err: unknown) => {
          logger.warn({ err: { type: 'RedisError', message: errorMessage(err) } }, 'cannot record how far the transfer stream was read');
        });
      }
    });
  }

  /** The leader lease is gone (taken over after a pause, or given back): stop evaluating and sending at once. */
  private stepDown(): void {
    if (!this.leading) return;
    this.leading = false;
    this.leadership++;
    this.cluster?.stopConsuming();
    this.notifier.halt();
    this.notifier = this.newNotifier();
    void this.notifier.reloadSilences().catch(() => undefined);
    this.logger.warn('no longer leading: another replica evaluates rules and sends notifications now');
  }

  /** Followers serve the shared picture: alerts and silences as the leader and the other replicas wrote them. */
  private async refreshHaView(): Promise<void> {
    const cluster = this.cluster;
    if (!cluster || this.stopping) return;
    try {
      this.leaseHolders = await cluster.coordinator.holders();
      if (!this.leading) {
        await this.alerts.restore({ quiet: true });
        await this.notifier.reloadSilences();
        this.notifier.update(this.alerts.alerts());
      }
    } catch {
      /* Redis down: keep the last view; the coordination alert says so */
    }
    if (!this.leading) this.applyCoordinationAlert(this.opts.clock.now());
  }

  private applyCoordinationAlert(now: number): void {
    const ha = this.setup.config.ha;
    if (!ha) return;
    const down = this.redisDownSince !== undefined && now - this.redisDownSince >= ha.lease_ttl;
    this.alerts.setBuiltin(coordinationDownCandidate(ha.replica_name, redisUrlForDisplay(ha.redis.url)), down, now);
  }

  /** Receivers' sent/failed series exist at 0 from the first scrape, so `rate()` and alerts on them work. */
  private initReceiverMetrics(): void {
    for (const r of this.setup.config.receivers) {
      for (const integration of configuredIntegrationKinds(r)) this.metrics.initReceiver(r.name, integration);
    }
  }

  private newEngine(rules: RuleDefinition[]): RuleEngine {
    return new RuleEngine(rules, {
      clock: this.opts.clock,
      logger: this.logger,
      sources: this.setup.config.sources.map((s) => s.name),
      displayTimezone: this.setup.config.display_timezone,
    });
  }

  /** Rebuild an engine's windows from every source's history (the local poller, or each source's committed cursors with ha:). */
  private async replayAll(engine: RuleEngine): Promise<number> {
    const cluster = this.cluster;
    if (!cluster) return this.replayInto(engine);
    const config = this.setup.config;
    let from = this.opts.clock.now() - Math.min(engine.historyNeeded(), MAX_REPLAY_MS);
    for (const source of config.sources) {
      const poller = this.newPoller({ ...config, sources: [source] }, cluster.sourceStore(source.name), () => undefined);
      await poller.restore();
      if (this.progress instanceof BusProgress) this.progress.seed(streamProgress(poller));
      from = Math.max(from, await this.replayInto(engine, poller));
    }
    return from;
  }

  /** Feed an engine the history its windows need; returns from when on it knows history. */
  private async replayInto(engine: RuleEngine, poller: Poller = this.poller): Promise<number> {
    const now = this.opts.clock.now();
    const span = Math.min(engine.historyNeeded(), MAX_REPLAY_MS);
    const complete = await poller.replay(span, (t) => engine.observe(t));
    return complete ? now - span : now;
  }

  /** A poller of `config.sources` writing its cursors to `state`, handing transfers to `sink` (default: this process's rules). */
  private newPoller(
    config: Config,
    state: StateStore = this.state,
    sink: (t: Transfer) => void = (t) => {
      this.metrics.observeTransfer(t);
      this.engine.observe(t);
      this.nextEngine?.observe(t);
    },
  ): Poller {
    for (const s of config.sources) this.metrics.initSource(s.name, config.poll.success_interval > 0 ? ['failures', 'successes'] : ['failures'], s.instances);
    return new Poller({
      sources: config.sources,
      poll: config.poll,
      pagerFor: (source: SourceConfig) =>
        new TransferHistoryClient({
          source,
          logger: this.logger,
          hooks: { onRequest: (endpoint, statusCode) => this.metrics.observeApiRequest(source.name, endpoint, statusCode) },
        }),
      clock: this.opts.clock,
      logger: this.logger,
      state,
      startedAt: this.startedAt,
      sink,
      hooks: {
        onPoll: (source, stream, seconds, reason) => this.metrics.observePoll(source, stream, seconds, reason),
        onRecords: (source, stream, n) => this.metrics.addRecords(source, stream, n),
        onInvalidRecords: (source, n) => this.metrics.addInvalidRecords(source, n),
        onLag: (source, stream, seconds) => this.metrics.setDataLag(source, stream, seconds),
      },
      onCycle: (_stream: PollStream) => void this.evaluate(),
    });
  }

  /** Evaluate rules and source health, update alerts, hand the alert set to the notifier. Never runs twice at once. */
  evaluate(): Promise<void> {
    if (!this.ready || this.stopping) return Promise.resolve();
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

  /** The poll streams of this process: all of them on one node, those of the sources whose lease it holds with `ha:`. */
  private localStreams(): PollStream[] {
    if (!this.cluster) return this.poller.streams;
    return [...this.sourcePollers.values()].flatMap((p) => p.poller.streams);
  }

  private completeness(): { completeUntil: SourceProgress['completeUntil']; completeFrom: SourceProgress['completeFrom'] } {
    return {
      completeUntil: (source, result) => this.progress.completeUntil(source, result),
      completeFrom: (source, result) => {
        const from = this.progress.completeFrom(source, result);
        return from === undefined ? undefined : Math.max(from, this.engineFrom ?? from);
      },
    };
  }

  private async evaluateOnce(): Promise<void> {
    const now = this.opts.clock.now();
    const config = this.setup.config;
    // With ha:, only the leader evaluates; the others show the leader's alerts (refreshHaView).
    if (!this.leading) return;
    const evaluations = this.engine.evaluate(now, this.completeness());
    this.alerts.apply(evaluations, now);
    const local = this.localStreams();
    for (const source of config.sources) {
      const silentFor = now - this.progress.lastHealthy(source.name);
      const down = silentFor >= config.poll.stale_after;
      const failing = local.filter((s) => s.source === source.name).find((s) => s.lastError);
      this.alerts.setSourceDown(source.name, down, now, failing?.lastError ? `last error: ${failing.lastError.reason}` : undefined);
      this.metrics.setSourceUp(source.name, !failing && !down);
    }
    this.applyCoordinationAlert(now);
    const all = this.alerts.alerts();
    this.metrics.setAlerts(all);
    this.notifier.update(all);
    this.metrics.setStateWriteOk(this.state.lastWriteOk);
    try {
      await this.alerts.flush();
    } catch (err) {
      this.logger.error({ err: errorFields(err), dir: config.state.dir }, 'could not persist alert state; the state directory is not writable');
    }
    this.metrics.setStateWriteOk(this.state.lastWriteOk);
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

  private apiAlerts(): ApiAlert[] {
    return this.alerts
      .alerts()
      .filter((a): a is Alert & { state: 'pending' | 'firing' } => a.state !== 'resolved')
      .map((a) => {
        const s = this.notifier.alertStatus(a);
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
        };
      });
  }

  /** What the status page at `/` shows, read at request time (rules are not evaluated here, only read). */
  private statusPageData(): StatusPageData {
    const now = this.opts.clock.now();
    const config = this.setup.config;
    const streams = this.localStreams().map((st) => st.status(now));
    return {
      now,
      timezone: config.display_timezone,
      version: this.opts.version,
      alerts: this.alerts
        .alerts()
        .filter((a): a is Alert & { state: 'pending' | 'firing' } => a.state !== 'resolved')
        .map((a) => {
          const s = this.notifier.alertStatus(a);
          return {
            labels: a.labels,
            annotations: a.annotations,
            state: a.state,
            activeAt: a.activeAt,
            fingerprint: a.fingerprint,
            silencedBy: s.silencedBy,
            inhibitedBy: s.inhibitedBy,
            ...(a.held ? { held: a.held } : {}),
          };
        }),
      expectations: this.leading ? this.engine.expectations(now, this.completeness()) : [],
      ...(this.cluster ? { cluster: this.clusterView() } : {}),
      sources: config.sources.map((s) => ({
        name: s.name,
        up:
          streams.filter((st) => st.source === s.name).every((st) => st.lastError === null) &&
          (!this.leading || now - this.progress.lastHealthy(s.name) < config.poll.stale_after),
        streams: streams
          .filter((st) => st.source === s.name)
          .map((st) => ({ stream: st.stream, instance: st.instance, lastSuccessfulPoll: st.lastSuccessfulPoll, dataLagSeconds: st.dataLagSeconds, lastError: st.lastError })),
      })),
      sends: this.notifier.recentSends(),
      silences: this.notifier.silences.list(),
    };
  }

  /** Which replica leads and which polls each source (status API and page), as Redis said a second ago. */
  private clusterView(): { replica: string; leader: string | null; leading: boolean; redisUp: boolean; replicas: string[]; sources: Record<string, string | null> } {
    const cluster = this.cluster;
    const holders = this.leaseHolders;
    return {
      replica: cluster?.config.replica_name ?? '',
      leader: holders[LEADER_LEASE] ?? null,
      leading: this.leading,
      redisUp: cluster?.coordinator.up ?? false,
      replicas: [...(cluster?.coordinator.replicas ?? [])],
      sources: Object.fromEntries(this.setup.config.sources.map((s) => [s.name, holders[`source:${s.name}`] ?? null])),
    };
  }

  status(): unknown {
    const now = this.opts.clock.now();
    const streams = this.localStreams().map((st) => st.status(now));
    return {
      ready: this.ready && !this.stopping,
      startedAt: new Date(this.startedAt).toISOString(),
      ...(this.cluster ? { ha: this.clusterView() } : {}),
      sources: this.setup.config.sources.map((s) => {
        const own = streams.filter((st) => st.source === s.name);
        const lastHealthy = this.leading ? this.progress.lastHealthy(s.name) : now;
        return {
          name: s.name,
          up: own.every((st) => st.lastError === null) && now - lastHealthy < this.setup.config.poll.stale_after,
          streams: own,
        };
      }),
      config: this.lastReload
        ? { lastReloadSuccessful: this.lastReload.ok, lastReloadAt: new Date(this.lastReload.at).toISOString(), ...(this.lastReload.error ? { lastReloadError: this.lastReload.error } : {}) }
        : null,
      state: {
        ...(this.cluster ? { store: 'redis' } : { dir: this.setup.config.state.dir }),
        writable: this.state.lastWriteOk,
        ...(this.state.lastWriteError ? { lastError: this.state.lastWriteError } : {}),
      },
    };
  }

  /**
   * Load config and rules again. On any problem keep the last good setup and say why. On success the new rule
   * engine is fed live transfers while its windows are rebuilt from history, then replaces the old one.
   */
  async reload(): Promise<{ ok: boolean; error?: string }> {
    const { clock } = this.opts;
    let next: LoadedSetup;
    try {
      next = await this.opts.load();
    } catch (err) {
      const error = errorMessage(err);
      this.logger.error({ err: error }, 'reload failed; keeping the last good configuration');
      this.metrics.setConfigReload(false, clock.now());
      this.lastReload = { ok: false, at: clock.now(), error };
      return { ok: false, error };
    }
    const sourcesChanged =
      JSON.stringify(next.config.sources) !== JSON.stringify(this.setup.config.sources) ||
      JSON.stringify(next.config.poll) !== JSON.stringify(this.setup.config.poll);
    if (next.config.server.listen !== this.setup.config.server.listen) {
      this.logger.warn('server.listen changed; it takes effect at the next restart');
    }
    if (next.config.state.dir !== this.setup.config.state.dir) {
      this.logger.warn('state.dir changed; it takes effect at the next restart');
    }
    if (this.cluster && (sourcesChanged || JSON.stringify(next.config.ha) !== JSON.stringify(this.setup.config.ha))) {
      // Leases are per source and the replicas must agree on the set: a rolling restart applies it everywhere.
      this.logger.warn('sources, poll or ha changed; with ha: they take effect at the next (rolling) restart');
      next = { ...next, config: { ...next.config, sources: this.setup.config.sources, poll: this.setup.config.poll, ha: this.setup.config.ha } };
    }
    this.setup = { ...next, config: { ...next.config, state: this.setup.config.state, server: this.setup.config.server } };
    const restartPoller = sourcesChanged && !this.cluster;
    if (restartPoller) {
      await this.poller.stop(SHUTDOWN_POLL_GRACE_MS);
      this.poller = this.newPoller(this.setup.config);
      this.progress = this.poller;
      await this.poller.restore();
    }
    const engine = this.newEngine(next.rules);
    this.nextEngine = engine;
    let from: number;
    try {
      from = this.leading ? await this.replayAll(engine) : clock.now();
    } finally {
      this.nextEngine = undefined;
    }
    this.engine = engine;
    this.engineFrom = from;
    // Alerts of rules that no longer exist resolve now instead of firing forever.
    this.alerts.retainRules(next.rules.map((r) => r.name), clock.now());
    this.notifier.reload(this.setup.config, next.templates);
    if (Boolean(next.webConfig?.tls) !== Boolean(this.http?.url.startsWith('https:'))) {
      this.logger.warn('turning TLS on or off takes effect at the next restart; users, headers and certificates are reloaded now');
    }
    this.http?.setSecurity(this.httpSecurity());
    this.initReceiverMetrics();
    if (restartPoller) this.poller.start();
    this.metrics.setConfigReload(true, clock.now());
    this.lastReload = { ok: true, at: clock.now() };
    this.logger.info({ rules: next.rules.length, sources: next.config.sources.length }, 'configuration reloaded');
    void this.evaluate();
    return { ok: true };
  }

  /** Graceful stop: finish the poll cycles in flight, evaluate once more, flush state and the outbox. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.tick) clearInterval(this.tick);
    if (this.wakeup) clearTimeout(this.wakeup);
    if (this.haView) clearInterval(this.haView);
    await this.poller?.stop(SHUTDOWN_POLL_GRACE_MS);
    // With ha: the last windows are committed to the stream; the leader reads what it can before handing over.
    await Promise.all([...this.sourcePollers.values()].map((p) => p.poller.stop(SHUTDOWN_POLL_GRACE_MS)));
    await this.evaluating;
    if (this.leading) {
      await this.alerts?.flush({ force: true }).catch((err: unknown) => this.logger.error({ err: errorFields(err) }, 'could not persist alert state at shutdown'));
      await this.notifier?.stop(SHUTDOWN_NOTIFY_GRACE_MS);
    } else {
      this.notifier?.halt();
    }
    // Leases given back: the other replicas take over now, not after lease_ttl.
    this.leading = false;
    await this.cluster?.close().catch(() => undefined);
    // fsync and close the state journals (the notification log's), so a power loss after a clean stop loses nothing.
    await this.state?.close().catch((err: unknown) => this.logger.error({ err: errorFields(err) }, 'could not close the state journals'));
    this.lock?.release();
    await this.http?.close();
  }
}

/** Create the state directory (the lock file lives in it) and return it. */
async function ensureDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return dir;
}

/** How far each stream of a poller is read (what a commit tells the leader). */
function streamProgress(poller: Poller | undefined): StreamProgress[] {
  if (!poller) return [];
  return poller.streams.map((s) => {
    const snap = s.snapshot();
    return {
      stream: s.id,
      source: s.source,
      result: RESULT_OF[s.kind],
      ...(snap.cursor !== undefined ? { cursor: snap.cursor } : {}),
      ...(snap.since !== undefined ? { since: snap.since } : {}),
      ...(snap.lastSuccess !== undefined ? { lastSuccess: snap.lastSuccess } : {}),
    };
  });
}

/** The streams every source has (kinds × instances), by source, as the pollers name them. */
function expectedStreams(config: Config): Map<string, Array<{ stream: string; result: 'success' | 'error' }>> {
  const kinds = config.poll.success_interval > 0 ? (['failures', 'successes'] as const) : (['failures'] as const);
  const out = new Map<string, Array<{ stream: string; result: 'success' | 'error' }>>();
  for (const source of config.sources) {
    const instances: Array<string | undefined> = source.instances.length > 0 ? source.instances : [undefined];
    out.set(
      source.name,
      kinds.flatMap((kind) => instances.map((i) => ({ stream: i === undefined ? `${source.name}/${kind}` : `${source.name}/${kind}/${i}`, result: RESULT_OF[kind] }))),
    );
  }
  return out;
}
