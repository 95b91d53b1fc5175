import type { ApiAck } from '../notify/ack/ack.js';
import { SlackAckListeners } from '../notify/integrations/slack/slack-ack-listener.js';
import { EventLoopShare } from '../util/time-slice.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { errorMessage } from '../util/errors.js';
import type { Config } from '../config/schema.js';
import { LEADER_LEASE, sourceOfLease, type Cluster, type ClusterEvents } from '../cluster/cluster.js';
import { LocalCluster } from '../cluster/local-cluster.js';
import { HaCluster } from '../ha/ha-cluster.js';
import { openHistory, type HistoryAvailability } from '../history/open-history.js';
import { FlowView } from '../flows/flow-view.js';
import { dueOfRule } from '../rules/due-deadlines.js';
import { createAlertmanagerView } from './alertmanager-view.js';
import { ApiTimeShift } from '../http/api-time-shift.js';
import { holidaysOfRules } from '../sla/calendar-view.js';
import { ledgerLines, ledgerRules } from '../rules/ledger-lines.js';
import type { SilenceApi } from '../http/daemon-api.js';
import { configuredIntegrationKinds } from '../notify/integrations/registry.js';
import { slaObjective } from '../rules/registry.js';
import { TransferWatchMetrics } from '../metrics/transfer-watch-metrics.js';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.js';
import { HttpSecurity } from '../http/security/http-security.js';
import type { LoadedSetup } from './load-setup.js';
import { LeadingRole } from './roles/leading-role.js';
import { SharedView, type HistoryStatus } from './roles/shared-view.js';
import { SourcePollingRole } from './roles/source-polling-role.js';
import { ReplicaGauges } from './roles/replica-gauges.js';
import type { HistoryStore } from '../history/history-store.js';
import type { HistoryReader } from '../http/history-routes.js';
import type { RejudgeRequest } from '../http/sla-routes.js';
import { HttpError } from '../http/http-error.js';

export type { ApiAlert } from './roles/shared-view.js';

/** SIGTERM must end within 10 s (contract); leave room for the HTTP close and the exit itself. */
const SHUTDOWN_POLL_GRACE_MS = 6_000;
const SHUTDOWN_NOTIFY_GRACE_MS = 2_500;
/** Every replica refreshes who holds what, and followers their alerts and silences, this often. */
const VIEW_REFRESH_MS = 1_000;
/** A replica that does not write the history asks the database this often whether it answers (history_up). */
const HISTORY_PING_MS = 10_000;

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

/**
 * The daemon wires three roles to a cluster and owns start-up, reload and shutdown. The cluster is one process
 * (LocalCluster: every lease is ours, state in state.dir) or replicas on Redis (`ha:`); the roles run the same
 * code on both:
 * - SourcePollingRole polls the sources whose lease this process holds and commits what it reads to the bus;
 * - LeadingRole, while the leader lease is ours, reads the bus, evaluates rules and sends notifications;
 * - SharedView serves the page and the API from what every replica shares.
 */
export class Daemon {
  private setup!: LoadedSetup;
  private cluster!: Cluster;
  private metrics!: TransferWatchMetrics;
  private polling!: SourcePollingRole;
  private leading!: LeadingRole;
  private view!: SharedView;
  private http: RunningHttpServer | undefined;
  /** Slack's Acknowledge buttons (contract 14): a Socket Mode connection per app token, on every replica. */
  private slackAcks: SlackAckListeners | undefined;
  private ready = false;
  private stopping = false;
  private refresh: NodeJS.Timeout | undefined;
  private historyPing: NodeJS.Timeout | undefined;
  private history!: HistoryAvailability;
  /** The flow summary's report for the API, the page and the metric (contract section 13); none without a history. */
  private flowView: FlowView | undefined;
  /** The gauges every replica keeps from the shared history (the ledger's figures, the flows). */
  private gauges: ReplicaGauges | undefined;
  /** A reader's last word on the history database (the leader's recorder has its own). */
  private historyReadable: boolean | undefined;
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

    // The only place where `ha:` matters: which cluster the roles run on.
    const events = this.clusterEvents();
    this.cluster = config.ha
      ? await HaCluster.connect(config.ha, logger, sourceNames, events)
      : await LocalCluster.open({ dir: config.state.dir, sources: sourceNames, logger, clock, events });
    // The poller hands each transfer on once (per-stream dedup across overlaps and abandoned windows), so the
    // metrics' own id memory (100,000 ids) would be redundant. Lease series only where there is a cluster to show.
    this.history = openHistory({ history: config.history, stateDir: config.state.dir, replicated: config.ha !== undefined }, logger);
    this.metrics = new TransferWatchMetrics({
      maxSeries: config.metrics.max_series,
      version: this.opts.version,
      history: this.history.store !== undefined,
      ...(this.cluster.description.shown ? { haLeases: [LEADER_LEASE, ...sourceNames] } : {}),
    });

    const setup = (): LoadedSetup => this.setup;
    // One event loop for the pollers' pages, the leader's batches and evaluations: each long job waits its turn,
    // so the HTTP server is served between any two slices (src/util/time-slice.ts).
    const loop = new EventLoopShare();
    this.polling = new SourcePollingRole({
      cluster: this.cluster,
      clock,
      logger,
      loop,
      metrics: this.metrics,
      startedAt: this.startedAt,
      config: () => this.setup.config,
      onCycle: () => void this.leading.evaluate(),
    });
    this.leading = new LeadingRole({
      cluster: this.cluster,
      clock,
      logger,
      loop,
      metrics: this.metrics,
      setup,
      replayPoller: (source) => this.polling.replayPoller(source),
      streamsOf: (source) => this.view.streamsOf(source),
      history: this.history.store,
    });
    if (this.history.store) {
      const store = this.history.store;
      this.flowView = new FlowView({
        read: async (fromDay) => {
          await store.ensureSchema();
          return store.flows.summaries(fromDay);
        },
        settings: () => ({ timezone: this.setup.config.display_timezone, calendars: this.setup.config.calendars, severalSources: this.setup.config.sources.length > 1 }),
        rules: () => this.setup.rules,
        clock,
        onReport: (watched, unwatched, stopped) => this.metrics.setFlows(watched, unwatched, stopped),
        loop,
      });
    }
    this.view = new SharedView({
      cluster: this.cluster,
      clock,
      version: this.opts.version,
      startedAt: this.startedAt,
      setup,
      leading: this.leading,
      ready: () => this.ready && !this.stopping,
      lastReload: () => this.lastReload,
      history: () => this.historyStatus(),
    });
    await this.leading.init();
    this.initReceiverMetrics();

    // Serve health and metrics while windows are rebuilt; /readyz says 503 until the first round of leases.
    await this.startHttp();
    this.metrics.setConfigReload(true, clock.now());
    this.lastReload = { ok: true, at: clock.now() };
    this.cluster.board.start(() => this.view.boardKeys());
    // A cluster of one grants the leader lease, awaits its takeover, then the sources'; on Redis the first
    // heartbeat round starts the takeovers and this replica serves the shared view meanwhile.
    await this.cluster.coordinator.start();
    this.ready = true;
    await this.view.refresh();
    this.refresh = setInterval(() => void this.view.refresh(), VIEW_REFRESH_MS);
    this.refresh.unref();
    if (this.history.store) {
      const store = this.history.store;
      this.historyPing = setInterval(() => {
        if (this.leading.history) return;
        store.ping().then(
          () => this.setHistoryReadable(true),
          () => this.setHistoryReadable(false),
        );
      }, HISTORY_PING_MS);
      this.historyPing.unref();
    }
    if (this.history.store) {
      this.gauges = new ReplicaGauges({ store: this.history.store, flows: this.flowView, metrics: this.metrics, clock, setup: () => this.setup });
      this.gauges.start();
    }
  }

  private setHistoryReadable(up: boolean): void {
    this.historyReadable = up;
    this.metrics.setHistoryUp(up);
  }

  /** How the history stands, for `/api/v1/status` and the page. */
  private historyStatus(): HistoryStatus {
    const h = this.history;
    if (h.state === 'disabled') return { history: 'disabled', why: h.why };
    const recorder = this.leading.history;
    const up = recorder ? recorder.up : this.historyReadable;
    return { history: h.state, where: h.where, ...(up !== undefined ? { up } : {}), ...(recorder ? { waiting: recorder.backlog } : {}) };
  }

  private async startHttp(): Promise<void> {
    const { clock, logger } = this.opts;
    const config = this.setup.config;
    const listen = this.opts.listen ?? config.server.listen;
    const loopbackOnly = /^(127\.|\[::1\]:|localhost:)/.test(listen);
    if (!this.setup.webConfig?.authenticates && !loopbackOnly) {
      logger.warn(
        'no server.web_config_file with authentication: reads are open, and writes (silences, reload) are accepted from this machine (loopback) only; see docs/security.md',
      );
    }
    // Through the leading role at call time: its notifier is replaced when leadership changes.
    const silences: SilenceApi = {
      list: () => this.leading.notifier.silences.list(),
      get: (id: string) => this.leading.notifier.silences.get(id),
      create: (input: unknown) => this.leading.notifier.silences.create(input),
      expire: (id: string) => this.leading.notifier.silences.expire(id),
    };
    const apiTime = new ApiTimeShift(this.opts.apiTimeOffsetMs ?? 0);
    this.http = await startHttpServer({
      listen,
      logger,
      metrics: this.metrics,
      security: this.httpSecurity(),
      ...(this.setup.webConfig?.tls ? { tls: this.setup.webConfig.tls } : {}),
      api: {
        ready: () => this.ready && !this.stopping,
        now: () => clock.now(),
        alerts: () => this.view.apiAlerts(),
        expectedFiles: () => this.view.expectedFiles(),
        status: () => this.view.status(),
        reload: () => this.reload(),
        silences: apiTime.silenceApi(silences),
        pageSilences: silences,
        acks: {
          list: () => this.leading.notifier.acks.list(),
          get: (id: string) => this.leading.notifier.acks.get(id),
          // The alerts firing as this replica knows them (a follower: as the leader last wrote them).
          create: (input: unknown) => this.leading.notifier.acks.create(input, this.leading.alerts.alerts().filter((a) => a.state === 'firing')),
          remove: (id: string, by: string) => this.leading.notifier.acks.remove(id, by),
          verifyLink: (token: string) => this.leading.notifier.links?.verify(token),
          acknowledgeLink: (token: string, by: string, comment: string) => this.acknowledgeLink(token, by, comment),
        },
        alertmanager: apiTime.alertmanagerView(
          createAlertmanagerView({
            now: () => clock.now(),
            startedAt: this.startedAt,
            version: this.opts.version,
            config: () => this.setup.config,
            firingAlerts: () => this.leading.alerts.alerts().filter((a) => a.state === 'firing'),
            status: (a) => this.leading.notifier.alertStatus(a),
            receiversOf: (a) => this.leading.notifier.receiversOf(a),
            groups: () => this.leading.notifier.alertGroups(),
            silences: () => this.leading.notifier.silences.list(),
          }),
        ),
        statusPage: () => this.view.statusPageData(),
        history: this.history.store ? historyWhileWhole(this.history.store) : this.history.why,
        sla: () => {
          const store = this.history.store;
          if (!store) return this.history.why ?? 'no history';
          // Never an empty or half-restored ledger as if it were true (contract 12a): 503 with the reason meanwhile.
          const damage = store.damage;
          if (damage) {
            return damage.restoredFrom
              ? `the history database was found damaged at ${new Date(damage.at).toISOString()} and restored from its backup of ${new Date(damage.restoredFrom.at).toISOString()}; the ledger since then is being judged again from the service history (try again in a minute)`
              : `the history database was found damaged at ${new Date(damage.at).toISOString()} and had no backup; the ledger is being filled again from the service history`;
          }
          const rejudge = this.leading.records.rejudge;
          return {
            ledger: store.ledger,
            objective: (rule: string) => slaObjective(this.setup.rules, rule),
            due: (rule: string, from: string, to: string) => dueOfRule(this.setup.rules, this.setup.config.calendars, rule, from, to, clock.now()),
            holidays: (from: string, to: string) => holidaysOfRules(this.setup.rules, this.setup.config.calendars, from, to),
            lines: () => ledgerLines(this.setup.rules),
            // The process's one re-judgement (a repair's too), and the given-up windows' reads, on any replica.
            ...(rejudge ? { rejudge: (req: RejudgeRequest) => rejudge.run(req) } : {}),
            retryBackfill: () => this.leading.records.retryGivenUp(),
          };
        },
        pageInfo: () => ({ timezone: this.setup.config.display_timezone, version: this.opts.version }),
        calendars: () => this.setup.config.calendars,
        flows: () => this.flowView ?? (this.history.state === 'disabled' ? this.history.why : 'no history'),
      },
    });
    logger.info({ url: this.http.url }, 'HTTP server listening');
    this.leading.setListenUrl(this.http.url);
    this.slackAcks = new SlackAckListeners({ logger, acknowledge: (token, by) => this.acknowledgeFromSlack(token, by) });
    await this.slackAcks.update(slackApps(config));
  }

  /** What the roles do when leases come and go and the shared store changes. */
  private clusterEvents(): ClusterEvents {
    return {
      onLeaseAcquired: (lease) => {
        const source = sourceOfLease(lease);
        this.metrics.setLeaseHeld(source ?? LEADER_LEASE, true);
        return source !== undefined ? this.polling.start(source) : this.takeOver();
      },
      onLeaseReleasing: async (lease) => {
        const source = sourceOfLease(lease);
        if (source !== undefined) await this.polling.handOver(source);
        else this.leading.stepDown('given back');
      },
      onLeaseLost: (lease, why) => {
        const source = sourceOfLease(lease);
        this.metrics.setLeaseHeld(source ?? LEADER_LEASE, false);
        if (source !== undefined) void this.polling.lost(source, why);
        else this.leading.stepDown(why);
      },
      onStoreUp: (up) => {
        this.metrics.setRedisUp(up);
        this.leading.setStoreUp(up);
      },
      onStoreReset: () => void this.writeBack(),
      onSilencesChanged: () => void this.leading.notifier.reloadSilences().catch(() => undefined),
    };
  }

  /**
   * Lead: a takeover that fails (the store refused a read halfway) is tried again while the lease is still ours,
   * so a held leader lease never leaves the cluster without anyone evaluating.
   */
  private async takeOver(): Promise<void> {
    try {
      await this.leading.takeOver();
    } catch (err) {
      this.logger.error({ role: 'leader', lease: LEADER_LEASE, err: errorMessage(err) }, 'could not take over as leader; trying again in a second');
      const retry = setTimeout(() => {
        if (!this.stopping && !this.leading.leading && this.cluster.coordinator.holds(LEADER_LEASE)) void this.takeOver();
      }, 1_000);
      retry.unref();
    }
  }

  /** The shared store restarted empty: write back what this replica holds, so the cluster continues where it was. */
  private async writeBack(): Promise<void> {
    const what = await this.leading.writeBack();
    const sources = await this.polling.writeBack();
    if (sources.length > 0) what.push(`cursors of ${sources.join(', ')}`);
    this.logger.warn({ replica: this.cluster.replica, rebuilt: what }, 'the shared state store restarted empty (Redis lost its data): wrote back what this replica holds');
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

  /** Receivers' sent/failed series and each rule's alert histograms exist at 0 from the first scrape, so `rate()` and alerts on them work. */
  private initReceiverMetrics(): void {
    this.metrics.initAlertnames(this.setup.rules.map((r) => r.name));
    this.metrics.initSla(ledgerRules(this.setup.rules).map((r) => ({ name: r.rule, keyLabels: r.keyLabel ? [r.keyLabel] : [], keys: r.keys, objective: r.objective })));
    for (const r of this.setup.config.receivers) {
      for (const integration of configuredIntegrationKinds(r)) this.metrics.initReceiver(r.name, integration);
    }
  }

  /** Evaluate now (tests and the demo use it to avoid waiting for the tick). */
  evaluate(): Promise<void> {
    return this.leading.evaluate();
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
    const previous = this.setup.config;
    if (next.config.server.listen !== previous.server.listen) this.logger.warn('server.listen changed; it takes effect at the next restart');
    if (next.config.state.dir !== previous.state.dir) this.logger.warn('state.dir changed; it takes effect at the next restart');
    const sourcesChanged =
      JSON.stringify(next.config.sources) !== JSON.stringify(previous.sources) || JSON.stringify(next.config.poll) !== JSON.stringify(previous.poll);
    let config = { ...next.config, state: previous.state, server: previous.server, ha: previous.ha };
    if (JSON.stringify(next.config.ha) !== JSON.stringify(previous.ha)) this.logger.warn('ha changed; it takes effect at the next (rolling) restart');
    this.setup = { ...next, config };
    if (sourcesChanged) {
      if (await this.cluster.setSources(config.sources.map((s) => s.name))) {
        await this.polling.restartAll();
      } else {
        // Leases are per source and the replicas must agree on the set: a rolling restart applies it everywhere.
        this.logger.warn('sources or poll changed; with ha: they take effect at the next (rolling) restart');
        config = { ...config, sources: previous.sources, poll: previous.poll };
        this.setup = { ...next, config };
      }
    }
    await this.leading.reload(this.setup);
    if (Boolean(next.webConfig?.tls) !== Boolean(this.http?.url.startsWith('https:'))) {
      this.logger.warn('turning TLS on or off takes effect at the next restart; users, headers and certificates are reloaded now');
    }
    this.http?.setSecurity(this.httpSecurity());
    await this.slackAcks?.update(slackApps(this.setup.config));
    this.initReceiverMetrics();
    this.metrics.setConfigReload(true, clock.now());
    this.lastReload = { ok: true, at: clock.now() };
    this.logger.info({ rules: next.rules.length, sources: config.sources.length }, 'configuration reloaded');
    void this.leading.evaluate();
    return { ok: true };
  }

  /**
   * A signed acknowledge token (a mail's link, Slack's button) in someone's name: the alerts it names that fire and
   * nobody acknowledged are acknowledged.
   */
  private async acknowledgeLink(token: string, by: string, comment: string): Promise<ApiAck | 'invalid' | 'nothing'> {
    const notifier = this.leading.notifier;
    const named = notifier.links?.verify(token);
    if (!named) return 'invalid';
    const firing = this.leading.alerts.alerts().filter((a) => a.state === 'firing');
    const wanted = new Set(named.fingerprints);
    const open = firing.filter((a) => wanted.has(a.fingerprint) && notifier.acks.ackOf(a.fingerprint) === undefined);
    if (open.length === 0) return 'nothing';
    return notifier.acks.create({ fingerprints: open.map((a) => a.fingerprint), by, comment }, firing);
  }

  /** A click on Slack's Acknowledge button, and what the channel is told of it. */
  private async acknowledgeFromSlack(token: string, by: string): Promise<string> {
    const done = await this.acknowledgeLink(token, by, 'from Slack');
    if (done === 'invalid') return 'Not acknowledged: this button was not made by this transfer-watch.';
    if (done === 'nothing') return 'Nothing to acknowledge: these alerts no longer fire, or someone acknowledged them already.';
    return `Acknowledged by ${done.by}: ${done.fingerprints.length} alert${done.fingerprints.length === 1 ? '' : 's'} (no repeats, no escalation while they fire).`;
  }

  /**
   * Graceful stop: pollers commit their last windows, the leader saves its state and delivers what it can, leases go
   * back. Says how many history records the database did not take (kept in the journal for the next start).
   */
  async stop(): Promise<{ historyRecordsUnwritten: number }> {
    if (this.stopping) return { historyRecordsUnwritten: 0 };
    this.stopping = true;
    if (this.refresh) clearInterval(this.refresh);
    if (this.historyPing) clearInterval(this.historyPing);
    this.gauges?.stop();
    await this.slackAcks?.stop();
    await this.polling?.stopAll(SHUTDOWN_POLL_GRACE_MS);
    const historyRecordsUnwritten = (await this.leading?.stop(SHUTDOWN_NOTIFY_GRACE_MS)) ?? 0;
    await this.history?.store?.close().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'could not close the history database cleanly'));
    // Leases given back (the others take over now, not after lease_ttl); state journals fsynced and closed, so a
    // power loss after a clean stop loses nothing.
    await this.cluster?.close().catch((err: unknown) => this.logger.error({ err: errorMessage(err) }, 'could not close the cluster state cleanly'));
    await this.http?.close();
    return { historyRecordsUnwritten };
  }
}

/**
 * The history's reads, answered 503 with the reason while a damaged file is being repaired (contract 12a): the alert and
 * notification history of a restored backup lacks the span since it, and is not shown as if it were whole.
 */
function historyWhileWhole(store: HistoryStore): HistoryReader {
  const whole = <T>(read: () => Promise<T>): Promise<T> => {
    const damage = store.damage;
    if (!damage) return read();
    return Promise.reject(
      new HttpError(503, 'history_restoring', `the history database was found damaged at ${new Date(damage.at).toISOString()} and is being repaired${damage.restoredFrom ? ` from its backup of ${new Date(damage.restoredFrom.at).toISOString()}` : ''}; try again in a minute`, { 'Retry-After': '30' }),
    );
  };
  return {
    alertEvents: (q) => whole(() => store.alertEvents(q)),
    attempts: (q) => whole(() => store.attempts(q)),
    silenceEvents: (q) => whole(() => store.silenceEvents(q)),
    oncall: (q) => whole(() => store.oncall(q)),
  };
}

/** The Slack apps whose Acknowledge buttons the configured receivers send (one connection per app token). */
function slackApps(config: LoadedSetup['config']): Array<{ appToken: string; apiUrl: string }> {
  return config.receivers.flatMap((r) => (r.slack?.app_token ? [{ appToken: r.slack.app_token, apiUrl: r.slack.api_url }] : []));
}
