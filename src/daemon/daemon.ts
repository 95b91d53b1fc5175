import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { errorMessage } from '../util/errors.js';
import type { Config, SourceConfig } from '../config/schema.js';
import { FileStateStore } from '../state/file-state-store.js';
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
import { configuredIntegrationKinds } from '../notify/integrations/registry.js';
import { TransferWatchMetrics } from '../metrics/transfer-watch-metrics.js';
import { startHttpServer } from '../http/http-server.js';
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
}

/**
 * The daemon: wires config, poller, rule engine, alert store, notifier, metrics and HTTP together, and owns
 * the order of start-up, evaluation, reload and shutdown.
 *
 * Order matters for "no notification lost or repeated": rules are evaluated only after rule windows were rebuilt
 * from history, the alert store restores identities and `activeAt` before the first evaluation, and the
 * notifier (with its persisted log and outbox) receives the whole alert set after every evaluation.
 */
export class Daemon {
  private setup!: LoadedSetup;
  private state!: FileStateStore;
  private metrics!: TransferWatchMetrics;
  private alerts!: AlertStore;
  private engine!: RuleEngine;
  /** During a reload the next engine is fed live transfers while its windows are rebuilt. */
  private nextEngine: RuleEngine | undefined;
  private notifier!: Notifier;
  private poller!: Poller;
  private http: { url: string; port: number; close(): Promise<void> } | undefined;
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

    // The poller hands each transfer on once (per-stream dedup across overlaps and abandoned windows), so the
    // metrics' own id memory (100,000 ids) would be redundant.
    this.metrics = new TransferWatchMetrics({ maxSeries: config.metrics.max_series, version: this.opts.version, rememberTransfers: 0 });
    this.state = new FileStateStore(config.state.dir, logger, clock);
    await this.state.init();

    this.alerts = new AlertStore({ clock, logger, state: this.state });
    await this.alerts.restore();
    this.engine = this.newEngine(this.setup.rules);
    this.notifier = new Notifier({
      config,
      clock,
      logger,
      state: this.state,
      templates: this.setup.templates,
      hooks: {
        onNotification: (receiver, integration, outcome) => this.metrics.observeNotification(receiver, integration, outcome),
        onQueueLength: (n) => this.metrics.setNotificationQueueLength(n),
      },
    });
    await this.notifier.restore();
    this.initReceiverMetrics();

    this.poller = this.newPoller(config);
    const restarted = await this.poller.restore();

    // Serve health and metrics while windows are rebuilt; /readyz says 503 until then.
    this.http = await startHttpServer({
      listen: this.opts.listen ?? config.server.listen,
      logger,
      metrics: this.metrics,
      api: {
        ready: () => this.ready && !this.stopping,
        alerts: () => this.apiAlerts(),
        status: () => this.status(),
        reload: () => this.reload(),
        silences: this.notifier.silences,
        alertmanager: createAlertmanagerView({
          now: () => clock.now(),
          startedAt: this.startedAt,
          version: this.opts.version,
          config: () => this.setup.config,
          firingAlerts: () => this.alerts.alerts().filter((a) => a.state === 'firing'),
          status: (a) => this.notifier.alertStatus(a),
          receiversOf: (a) => this.notifier.receiversOf(a),
          groups: () => this.notifier.alertGroups(),
          silences: () => this.notifier.silences.list(),
        }),
        statusPage: () => this.statusPageData(),
      },
    });
    logger.info({ url: this.http.url }, 'HTTP server listening');
    // Links in messages (and Alertmanager's generatorURL) name the bound port, not a configured port 0.
    this.notifier.setListenUrl(this.http.url);

    if (restarted) this.engineFrom = await this.replayInto(this.engine);
    this.metrics.setConfigReload(true, clock.now());
    this.lastReload = { ok: true, at: clock.now() };
    this.ready = true;

    await this.evaluate();
    this.poller.start();
    this.notifier.start();
    this.tick = setInterval(() => void this.evaluate(), EVALUATION_TICK_MS);
    this.tick.unref();
  }

  /** Receivers' sent/failed series exist at 0 from the first scrape, so `rate()` and alerts on them work. */
  private initReceiverMetrics(): void {
    for (const r of this.setup.config.receivers) {
      for (const integration of configuredIntegrationKinds(r)) this.metrics.initReceiver(r.name, integration);
    }
  }

  private newEngine(rules: RuleDefinition[]): RuleEngine {
    return new RuleEngine(rules, { clock: this.opts.clock, logger: this.logger, sources: this.setup.config.sources.map((s) => s.name) });
  }

  /** Feed an engine the history its windows need; returns from when on it knows history. */
  private async replayInto(engine: RuleEngine): Promise<number> {
    const now = this.opts.clock.now();
    const span = Math.min(engine.historyNeeded(), MAX_REPLAY_MS);
    const complete = await this.poller.replay(span, (t) => engine.observe(t));
    return complete ? now - span : now;
  }

  private newPoller(config: Config): Poller {
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
      state: this.state,
      startedAt: this.startedAt,
      sink: (t: Transfer) => {
        this.metrics.observeTransfer(t);
        this.engine.observe(t);
        this.nextEngine?.observe(t);
      },
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
      .catch((err: unknown) => this.logger.error({ err: errorMessage(err) }, 'evaluation failed'))
      .finally(() => {
        this.evaluating = undefined;
        if (this.evaluateAgain) {
          this.evaluateAgain = false;
          void this.evaluate();
        }
      });
    return this.evaluating;
  }

  private async evaluateOnce(): Promise<void> {
    const now = this.opts.clock.now();
    const config = this.setup.config;
    const evaluations = this.engine.evaluate(now, {
      completeUntil: (source, result) => this.poller.completeUntil(source, result),
      completeFrom: (source, result) => {
        const from = this.poller.completeFrom(source, result);
        return from === undefined ? undefined : Math.max(from, this.engineFrom ?? from);
      },
    });
    this.alerts.apply(evaluations, now);
    for (const source of config.sources) {
      const silentFor = now - this.poller.lastHealthy(source.name);
      const down = silentFor >= config.poll.stale_after;
      const streams = this.poller.streams.filter((s) => s.source === source.name);
      const failing = streams.find((s) => s.lastError);
      this.alerts.setSourceDown(source.name, down, now, failing?.lastError ? `last error: ${failing.lastError.reason}` : undefined);
      this.metrics.setSourceUp(source.name, !failing && !down);
    }
    const all = this.alerts.alerts();
    this.metrics.setAlerts(all);
    this.notifier.update(all);
    this.metrics.setStateWriteOk(this.state.lastWriteOk);
    try {
      await this.alerts.flush();
    } catch (err) {
      this.logger.error({ err: errorMessage(err), dir: config.state.dir }, 'could not persist alert state; the state directory is not writable');
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
        };
      });
  }

  /** What the status page at `/` shows, read at request time (rules are not evaluated here, only read). */
  private statusPageData(): StatusPageData {
    const now = this.opts.clock.now();
    const config = this.setup.config;
    const streams = this.poller.status();
    return {
      now,
      timezone: config.display_timezone,
      version: this.opts.version,
      alerts: this.alerts
        .alerts()
        .filter((a): a is Alert & { state: 'pending' | 'firing' } => a.state !== 'resolved')
        .map((a) => {
          const s = this.notifier.alertStatus(a);
          return { labels: a.labels, annotations: a.annotations, state: a.state, activeAt: a.activeAt, fingerprint: a.fingerprint, silencedBy: s.silencedBy, inhibitedBy: s.inhibitedBy };
        }),
      expectations: this.engine.expectations(now, {
        completeUntil: (source, result) => this.poller.completeUntil(source, result),
        completeFrom: (source, result) => {
          const from = this.poller.completeFrom(source, result);
          return from === undefined ? undefined : Math.max(from, this.engineFrom ?? from);
        },
      }),
      sources: config.sources.map((s) => ({
        name: s.name,
        up: streams.filter((st) => st.source === s.name).every((st) => st.lastError === null) && now - this.poller.lastHealthy(s.name) < config.poll.stale_after,
        streams: streams
          .filter((st) => st.source === s.name)
          .map((st) => ({ stream: st.stream, instance: st.instance, lastSuccessfulPoll: st.lastSuccessfulPoll, dataLagSeconds: st.dataLagSeconds, lastError: st.lastError })),
      })),
      sends: this.notifier.recentSends(),
      silences: this.notifier.silences.list(),
    };
  }

  status(): unknown {
    const now = this.opts.clock.now();
    const streams = this.poller.status();
    return {
      ready: this.ready && !this.stopping,
      startedAt: new Date(this.startedAt).toISOString(),
      sources: this.setup.config.sources.map((s) => {
        const own = streams.filter((st) => st.source === s.name);
        const lastHealthy = this.poller.lastHealthy(s.name);
        return {
          name: s.name,
          up: own.every((st) => st.lastError === null) && now - lastHealthy < this.setup.config.poll.stale_after,
          streams: own,
        };
      }),
      config: this.lastReload
        ? { lastReloadSuccessful: this.lastReload.ok, lastReloadAt: new Date(this.lastReload.at).toISOString(), ...(this.lastReload.error ? { lastReloadError: this.lastReload.error } : {}) }
        : null,
      state: { dir: this.setup.config.state.dir, writable: this.state.lastWriteOk, ...(this.state.lastWriteError ? { lastError: this.state.lastWriteError } : {}) },
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
    this.setup = { ...next, config: { ...next.config, state: this.setup.config.state, server: this.setup.config.server } };
    if (sourcesChanged) {
      await this.poller.stop(SHUTDOWN_POLL_GRACE_MS);
      this.poller = this.newPoller(this.setup.config);
      await this.poller.restore();
    }
    const engine = this.newEngine(next.rules);
    this.nextEngine = engine;
    let from: number;
    try {
      from = await this.replayInto(engine);
    } finally {
      this.nextEngine = undefined;
    }
    this.engine = engine;
    this.engineFrom = from;
    // Alerts of rules that no longer exist resolve now instead of firing forever.
    this.alerts.retainRules(next.rules.map((r) => r.name), clock.now());
    this.notifier.reload(this.setup.config, next.templates);
    this.initReceiverMetrics();
    if (sourcesChanged) this.poller.start();
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
    await this.poller?.stop(SHUTDOWN_POLL_GRACE_MS);
    await this.evaluating;
    await this.alerts?.flush().catch((err: unknown) => this.logger.error({ err: errorMessage(err) }, 'could not persist alert state at shutdown'));
    await this.notifier?.stop(SHUTDOWN_NOTIFY_GRACE_MS);
    // fsync and close the state journals (the notification log's), so a power loss after a clean stop loses nothing.
    await this.state?.close().catch((err: unknown) => this.logger.error({ err: errorMessage(err) }, 'could not close the state journals'));
    await this.http?.close();
  }
}
