import type { Alert, Labels } from '../alerts/alert.js';
import type { StateStore } from '../state/state-store.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { redactSecrets } from '../util/redact.js';
import { buildNotification, type NotificationSettings } from './build-notification.js';
import { DedupStage } from './dedup/dedup-stage.js';
import { NotificationLog, nflogKey } from './dedup/nflog.js';
import { DeliverStage, type DeliveryHooks, type NewDelivery } from './deliver/deliver-stage.js';
import { Outbox } from './deliver/outbox.js';
import type { SendOutcome } from './deliver/recent-sends.js';
import type { BackoffOptions } from '../base/backoff.js';
import type { AlertGroup } from './dispatch/alert-group.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { buildRoute, type Route } from './dispatch/route.js';
import { createIntegrations, receiverSecrets } from './integrations/registry.js';
import { Inhibitor } from './mute/inhibitor.js';
import { MuteStage, type AlertStatus } from './mute/mute-stage.js';
import type { SilenceApi } from './mute/silence.js';
import { SilenceStore } from './mute/silence-store.js';
import { TimeIntervals } from './mute/time-intervals.js';
import type { Integration, Notification } from './notification.js';
import type { NotifyConfig } from './notify-config.js';
import type { ReceiverConfig } from './receiver-schema.js';
import type { TemplateSet } from './templates/template-set.js';
import { AckStore } from './ack/ack-store.js';
import { EscalationLog } from './escalate/escalation-log.js';
import { AckLinks } from './ack/ack-links.js';

export type { SilenceApi } from './mute/silence.js';
export type { AlertStatus } from './mute/mute-stage.js';
export { needsUpdate } from './dedup/dedup-stage.js';

export type NotifierHooks = DeliveryHooks;

export interface NotifierOptions {
  config: NotifyConfig;
  clock: Clock;
  logger: Logger;
  state: StateStore;
  hooks?: NotifierHooks;
  /** Tests inject fake integrations; the default builds them from src/notify/integrations/registry.ts. */
  integrationsFor?: (receiver: ReceiverConfig) => Integration[];
  /** Jitter source, [0, 1). */
  random?: () => number;
  templates?: TemplateSet | undefined;
  /** How long a notification is retried before it is abandoned (logged as an error, counted). Default 24h. */
  giveUpAfterMs?: number;
  /** Bound on the sends tried by stop(). Default 5 s. */
  stopTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** Where silences live when not in `state` (several replicas share them; see src/ha/). */
  silenceState?: StateStore;
  /** After this process changed a silence (other replicas are told to reload). */
  onSilencesChanged?: () => void;
  /** Where acknowledgements live when not in `state` (every replica takes them; see src/ha/). */
  ackState?: StateStore;
  /** After this process changed an acknowledgement (other replicas are told to reload). */
  onAcksChanged?: () => void;
  /** An escalation step queued (contract 14): for the history. */
  onEscalated?: (e: { groupKey: string; step: number; of: number; receiver: string; fingerprints: string[]; since: number; at: number }) => void;
  /**
   * Asked right before each send: false leaves the notification in the outbox unsent (this process is no longer
   * the one that sends, e.g. it lost its lease while paused). Default: always true.
   */
  claim?: () => Promise<boolean>;
}

export const DEFAULT_GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** Upper bound of one timer, so a wall-clock jump never leaves the notifier asleep for long. */
const MAX_TIMER_MS = 60_000;

/** What a config decides; rebuilt on reload, swapped in one assignment. */
interface Pipeline {
  route: Route;
  receivers: Map<string, ReceiverConfig>;
  mute: MuteStage;
  settings: NotificationSettings;
  /** Whether some route escalates: without, a tick has no escalation to look at (unless a reload removed one). */
  escalates: boolean;
}

function escalates(route: Route): boolean {
  return route.options.escalate.length > 0 || route.routes.some(escalates);
}

/**
 * The notification path, composed: dispatch (route → groups → timers), then for each due group the mute
 * stage (time intervals, silences, inhibition), the dedup stage (against the notification log) and the
 * deliver stage (outbox and retrier). Each stage lives in its own folder and knows nothing of the others;
 * this class only wires them and owns the one timer.
 *
 * Decisions are taken on the injected clock in `tick()`; timers only schedule calls to it.
 */
export class Notifier {
  readonly silences: SilenceApi;
  /** Acknowledgements (contract 14): taken by any replica's API, obeyed by the one that notifies. */
  readonly acks: AckStore;
  private readonly escalations: EscalationLog;
  private readonly onEscalated: NotifierOptions['onEscalated'];
  /** Signs and checks the acknowledge links of messages (loaded with the rest of the state at `restore`). */
  links: AckLinks | undefined;
  private readonly linkState: StateStore;
  private readonly silenceStore: SilenceStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly integrationsFor: (receiver: ReceiverConfig) => Integration[];
  private readonly stopTimeoutMs: number;
  private readonly giveUpAfterMs: number;
  private readonly dedup: DedupStage;
  private readonly deliver: DeliverStage;
  private readonly dispatcher: Dispatcher;
  private pipeline: Pipeline;
  /** Where the daemon's HTTP server is bound; links use it when `server.external_url` is not set. */
  private listenUrl: string | undefined;
  private server: NotifyConfig['server'];
  private readonly integrationCache = new Map<string, Integration[]>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  /** Whether the alerts were handed over once: before, nothing is known to fire, and no ack is settled on that. */
  private updated = false;
  /** User templates; replaced on reload, read when integrations are (re)built. */
  private templates: TemplateSet | undefined;

  constructor(opts: NotifierOptions) {
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.templates = opts.templates;
    this.integrationsFor =
      opts.integrationsFor ?? ((receiver) => createIntegrations(receiver, { logger: opts.logger, templates: this.templates, clock: opts.clock }));
    this.giveUpAfterMs = opts.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 5_000;
    const nflog = new NotificationLog(opts.state, opts.logger);
    const outbox = new Outbox(opts.state, opts.logger);
    this.silenceStore = new SilenceStore(
      opts.clock,
      opts.silenceState ?? opts.state,
      opts.logger,
      () => {
        opts.onSilencesChanged?.();
        this.schedule();
      },
      undefined,
      { maxSilences: opts.config.server.max_silences, maxSizeBytes: opts.config.server.max_silence_size_bytes },
    );
    this.silences = this.silenceStore;
    this.acks = new AckStore(opts.clock, opts.ackState ?? opts.silenceState ?? opts.state, opts.logger, () => {
      opts.onAcksChanged?.();
      this.schedule();
    });
    this.escalations = new EscalationLog(opts.state, opts.logger);
    this.linkState = opts.ackState ?? opts.silenceState ?? opts.state;
    this.onEscalated = opts.onEscalated;
    this.server = opts.config.server;
    this.pipeline = this.buildPipeline(opts.config);
    this.dispatcher = new Dispatcher(this.pipeline.route);
    this.dedup = new DedupStage(nflog, outbox);
    this.deliver = new DeliverStage({
      nflog,
      outbox,
      clock: opts.clock,
      logger: opts.logger,
      hooks: opts.hooks ?? {},
      integration: (receiver, kind) => this.findIntegration(receiver, kind),
      redact: (receiver, text) => this.redact(receiver, text),
      random: opts.random ?? Math.random,
      giveUpAfterMs: this.giveUpAfterMs,
      ...(opts.claim ? { claim: opts.claim } : {}),
      ...(opts.backoff ? { backoff: opts.backoff } : {}),
    });
  }

  /** Recent send attempts, newest first (bounded, in memory; the status page shows them). */
  recentSends(): SendOutcome[] {
    return this.deliver.recentSends();
  }

  /** Notifications abandoned since start (also logged as errors and reported through hooks.onGiveUp). */
  get givenUpCount(): number {
    return this.deliver.givenUpCount;
  }

  /** Notifications waiting in the outbox. */
  get queueLength(): number {
    return this.deliver.queueLength;
  }

  async restore(): Promise<void> {
    await this.silenceStore.restore();
    await this.acks.restore();
    await this.escalations.restore();
    this.links ??= await AckLinks.load(this.linkState);
    await this.deliver.restore();
  }

  /** The firing alerts as the notifier knows them now (what an ack can select). */
  firing(): Alert[] {
    return this.dispatcher.firingAlerts();
  }

  /** The alert with the ack that holds it, if any (a resolved one: the ack it had when it resolved). */
  withAck(alert: Alert): Alert {
    const ack = this.acks.ackOf(alert.fingerprint, { resolved: alert.state === 'resolved' });
    return ack ? { ...alert, ack } : alert;
  }

  start(): void {
    this.started = true;
    this.schedule();
  }

  /** Write the log, the outbox and the silences again in full at the next tick (the store lost them). */
  rewriteState(): void {
    this.deliver.markStale();
    this.silenceStore.markStale();
    this.schedule();
  }

  /** Load the silences and the acknowledgements again (another replica changed them: one signal tells both). */
  async reloadSilences(): Promise<void> {
    await this.silenceStore.restore();
    await this.acks.restore();
  }

  /**
   * Stop at once without writing anything (this process is no longer the one that notifies): timers cleared,
   * sends in flight aborted; what is in the outbox stays for whoever notifies now.
   */
  halt(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.deliver.abort.abort();
  }

  /** The full current alert set: pending alerts are ignored; firing and recently resolved are grouped. */
  update(alerts: Alert[]): void {
    this.updated = true;
    this.dispatcher.update(alerts, this.clock.now());
    this.schedule();
  }

  alertStatus(alert: Alert): AlertStatus {
    return this.pipeline.mute.status(alert, this.dispatcher.routesOf(alert), this.dispatcher.firingAlerts(), this.clock.now());
  }

  /** The receivers an alert is routed to (deduplicated, in routing order). */
  receiversOf(alert: Alert): string[] {
    return [...new Set(this.dispatcher.routesOf(alert).map((r) => r.options.receiver))];
  }

  /** The aggregation groups as they stand: labels, receiver and the firing alerts of each. */
  alertGroups(): Array<{ labels: Labels; receiver: string; alerts: Alert[] }> {
    return this.dispatcher
      .groupList()
      .map((g) => ({ labels: g.labels, receiver: g.receiver, alerts: g.alerts.filter((a) => a.state === 'firing') }))
      .filter((g) => g.alerts.length > 0);
  }

  /**
   * The URL the HTTP server is actually bound to. `server.listen` may say port 0 (or be overridden, as the demo
   * does); without this, links in messages and Alertmanager's generatorURL would point at port 0.
   */
  setListenUrl(url: string): void {
    this.listenUrl = url.replace(/\/+$/, '');
    this.pipeline.settings.externalUrl = externalUrl({ server: this.server }, this.listenUrl);
  }

  /** New routes, receivers, inhibit rules and intervals; the nflog and outbox are kept. Throws (keeping the old) when invalid. */
  reload(config: NotifyConfig, templates?: TemplateSet): void {
    const pipeline = this.buildPipeline(config);
    this.server = config.server;
    this.pipeline = pipeline;
    this.templates = templates;
    this.integrationCache.clear();
    this.dispatcher.reload(pipeline.route, this.clock.now());
    this.schedule();
  }

  /**
   * Do everything due at the clock's current time: flush due groups, send due outbox entries (one group's
   * messages in order). Resolves when the sends it started have finished. Tests call it directly.
   */
  async tick(): Promise<void> {
    const now = this.clock.now();
    const { flush, resend } = this.dispatcher.due(now);
    if (flush.length > 0 || resend.length > 0) await this.flushGroups(flush, resend, now);
    await this.escalate(now);
    if (this.updated) await this.acks.settle(new Set(this.dispatcher.firingAlerts().map((a) => a.fingerprint)));
    await this.escalations.persist();
    await this.silenceStore.retryPersist();
    await this.deliver.sendDue();
    this.schedule();
  }

  /** Graceful shutdown: send what is due within `timeoutMs` (default `stopTimeoutMs`), persist, clear timers. */
  async stop(timeoutMs: number = this.stopTimeoutMs): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let deadline: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => {
      deadline = setTimeout(() => {
        // Abort sends still running so their entries stay in the outbox for the next start.
        this.deliver.abort.abort();
        resolve();
      }, timeoutMs);
    });
    try {
      await Promise.race([this.deliver.sendDue(), timeUp]);
    } catch (err) {
      this.logger.error({ err }, 'error while flushing the outbox at shutdown');
    } finally {
      clearTimeout(deadline);
    }
    await this.deliver.flush();
    if (this.deliver.queueLength > 0) this.logger.warn({ pending: this.deliver.queueLength }, 'notifications still pending at shutdown; they are sent at the next start');
  }

  /** mute → dedup → deliver for each due group; `resend` groups only for integrations that need repeats (Alertmanager). */
  private async flushGroups(flush: AlertGroup[], resend: AlertGroup[], now: number): Promise<void> {
    const firing = this.dispatcher.firingAlerts();
    const deliveries: NewDelivery[] = [];
    const passes: Array<[AlertGroup, boolean]> = [...flush.map((g): [AlertGroup, boolean] => [g, false]), ...resend.map((g): [AlertGroup, boolean] => [g, true])];
    const acknowledged = new Set(firing.filter((a) => this.acks.ackOf(a.fingerprint) !== undefined).map((a) => a.fingerprint));
    for (const [group, resendOnly] of passes) {
      const reported = new Map(group.alerts);
      const receiver = group.route.options.receiver;
      const integrations = this.integrationsOf(receiver);
      const alerts = this.pipeline.mute.filter(group.route, reported.values(), firing, now);
      if (alerts.mutedBy.length > 0) this.logger.debug({ group: group.key, mutedBy: alerts.mutedBy }, 'group muted by time interval');
      else if (alerts.visible.length > 0 || alerts.hiddenResolved.length > 0) {
        for (const integration of integrations) {
          if (resendOnly && integration.resendInterval === undefined) continue;
          const key = nflogKey(receiver, integration.kind, group.key);
          const decision = this.dedup.decide({
            key,
            alerts,
            sendResolved: integration.sendResolved,
            repeatIntervalMs: Math.min(group.route.options.repeatIntervalMs, integration.resendInterval ?? Infinity),
            now,
            // An acknowledged alert is not repeated (contract 14); Alertmanager's resends are its liveness, not a page.
            acknowledged: integration.resendInterval === undefined ? acknowledged : new Set(),
          });
          if (decision.action === 'forget') await this.deliver.remember(key, { firing: decision.firing, resolved: decision.resolved, sentAt: now });
          if (decision.action !== 'send') continue;
          deliveries.push({
            key,
            receiver,
            integration: integration.kind,
            notification: this.withAckLink(buildNotification(this.pipeline.settings, receiver, group, decision.alerts.map((a) => this.withAck(a))), now),
            firing: decision.firing,
            resolved: decision.resolved,
            createdAt: now,
            attempts: 0,
            nextAttemptAt: now,
            giveUpAt: now + this.giveUpAfterMs,
          });
        }
      }
      // An escalating route's clock starts at the group's first notification of a firing alert.
      if (group.route.options.escalate.length > 0 && deliveries.some((d) => d.notification.groupKey === group.key && d.firing.length > 0)) this.escalations.begin(group.key, now);
      group.nextResendAt = now + minResend(integrations);
      if (resendOnly) continue;
      // A muted route keeps its resolved alerts: their resolution is told once the route is active again.
      this.dispatcher.flushed(group, alerts.mutedBy.length > 0 ? new Map() : reported, now);
    }
    await this.deliver.enqueue(deliveries);
  }

  /**
   * A firing message's acknowledge token (contract 14), naming its firing alerts nobody acknowledged: Slack's button
   * carries it; the mail's link too, only with `server.external_url` (a link to the address the daemon happens to
   * listen on would not reach it from a mail client).
   */
  private withAckLink(n: Notification, now: number): Notification {
    if (!this.links) return n;
    const open = n.alerts.filter((a) => a.state === 'firing' && a.ack === undefined).map((a) => a.fingerprint);
    if (open.length === 0) return n;
    const token = this.links.sign(open, now);
    return { ...n, ackToken: token, ...(this.server.external_url ? { ackUrl: `${this.pipeline.settings.externalUrl}/-/ack?t=${token}` } : {}) };
  }

  /**
   * Contract 14: each group of an escalating route that fires with an alert nobody acknowledged is told to the next
   * step's receiver once `after` has passed since its first notification; one send per step (the escalation log,
   * in the state store, is what a leader taking over reads). A group with nothing firing ends its episode; an ack of
   * every firing alert holds the steps (taken back, they go on).
   */
  private async escalate(now: number): Promise<void> {
    // Every tick comes here: with no escalating route and no episode left, there is nothing to walk.
    if (!this.pipeline.escalates && this.escalations.keys().length === 0) return;
    const firing = this.dispatcher.firingAlerts();
    const deliveries: NewDelivery[] = [];
    const groups = new Map(this.dispatcher.groupList().map((g) => [g.key, g]));
    for (const key of this.escalations.keys()) {
      const g = groups.get(key);
      if (!g || !g.alerts.some((a) => a.state === 'firing')) this.escalations.end(key);
    }
    for (const g of groups.values()) {
      const steps = g.route.options.escalate;
      const entry = this.escalations.get(g.key);
      if (steps.length === 0 || !entry) continue;
      const visible = this.pipeline.mute.filter(g.route, g.alerts, firing, now);
      if (visible.mutedBy.length > 0) continue;
      const alive = visible.visible.filter((a) => a.state === 'firing');
      const unacknowledged = alive.filter((a) => this.acks.ackOf(a.fingerprint) === undefined);
      if (unacknowledged.length === 0) continue;
      for (const [i, step] of steps.entries()) {
        if (entry.sent.includes(i)) continue;
        if (now < entry.since + step.afterMs) break;
        const notification = this.withAckLink(
          { ...buildNotification(this.pipeline.settings, step.receiver, g, alive.map((a) => this.withAck(a))), escalation: { step: i + 1, of: steps.length, since: entry.since, receiver: g.receiver } },
          now,
        );
        const fingerprints = alive.map((a) => a.fingerprint).sort();
        for (const integration of this.integrationsOf(step.receiver)) {
          deliveries.push({
            key: nflogKey(step.receiver, integration.kind, `${g.key}#escalation:${i}`),
            receiver: step.receiver,
            integration: integration.kind,
            notification,
            firing: fingerprints,
            resolved: [],
            createdAt: now,
            attempts: 0,
            nextAttemptAt: now,
            giveUpAt: now + this.giveUpAfterMs,
          });
        }
        this.escalations.markSent(g.key, i);
        this.logger.info({ group: g.key, step: i + 1, receiver: step.receiver, unacknowledged_since: new Date(entry.since).toISOString() }, 'escalated: nobody acknowledged the group');
        this.onEscalated?.({ groupKey: g.key, step: i + 1, of: steps.length, receiver: step.receiver, fingerprints: unacknowledged.map((a) => a.fingerprint), since: entry.since, at: now });
      }
    }
    // The steps are queued (durable in the outbox) before they are marked in the log's write: a stop between the two
    // sends a step again rather than never.
    await this.deliver.enqueue(deliveries);
  }

  private integrationsOf(receiver: string): Integration[] {
    let list = this.integrationCache.get(receiver);
    if (!list) {
      const config = this.pipeline.receivers.get(receiver);
      list = config ? this.integrationsFor(config) : [];
      this.integrationCache.set(receiver, list);
    }
    return list;
  }

  private findIntegration(receiver: string, kind: string): Integration | undefined {
    if (!this.pipeline.receivers.has(receiver)) return undefined;
    return this.integrationsOf(receiver).find((i) => i.kind === kind);
  }

  private redact(receiver: string, text: string): string {
    const config = this.pipeline.receivers.get(receiver);
    return config ? redactSecrets(text, receiverSecrets(config)) : text;
  }

  private buildPipeline(config: NotifyConfig): Pipeline {
    const intervals = new TimeIntervals(config.mute_time_intervals);
    const route = buildRoute(
      config.route,
      config.receivers.map((r) => r.name),
      intervals.names(),
    );
    return {
      route,
      escalates: escalates(route),
      receivers: new Map(config.receivers.map((r) => [r.name, r])),
      mute: new MuteStage(this.silenceStore, new Inhibitor(config.inhibit_rules), intervals),
      settings: { externalUrl: externalUrl(config, this.listenUrl), displayTimezone: config.display_timezone },
    };
  }

  /** When `tick()` next has something to do (a group timer or a retry), or Infinity. */
  nextWakeup(): number {
    // A refused silences write is retried every second, like the outbox and the log (see DeliverStage).
    const silences = this.silenceStore.stale ? this.clock.now() + 1_000 : Infinity;
    return Math.min(this.dispatcher.nextWakeup(), this.deliver.nextWakeup(), silences);
  }

  private schedule(): void {
    if (!this.started || this.stopped) return;
    const next = this.nextWakeup();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (next === Infinity) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.clock.now()));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tick().catch((err: unknown) => this.logger.error({ err }, 'notifier tick failed'));
    }, delay);
    this.timer.unref();
  }
}

function minResend(integrations: readonly Integration[]): number {
  return Math.min(Infinity, ...integrations.map((i) => (i.resendInterval !== undefined && i.resendInterval > 0 ? i.resendInterval : Infinity)));
}

function externalUrl(config: Pick<NotifyConfig, 'server'>, listenUrl?: string): string {
  if (config.server.external_url) return config.server.external_url.replace(/\/+$/, '');
  if (listenUrl) return listenUrl;
  const listen = config.server.listen;
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i);
  const port = listen.slice(i + 1);
  const shown = host === '' || host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  return `http://${shown}:${port}`;
}
