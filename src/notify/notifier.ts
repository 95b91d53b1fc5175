import type { Alert, Labels } from '../alerts/alert.js';
import type { Config } from '../config/schema.js';
import type { StateStore } from '../state/state-store.js';
import type { Clock } from '../util/clock.js';
import { errorMessage } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { redactSecrets } from '../util/redact.js';
import { AlertGroup } from './alert-group.js';
import { Inhibitor } from './inhibitor.js';
import { createIntegrations } from './integrations/registry.js';
import { NotificationLog, nflogKey, type NflogEntry } from './nflog.js';
import { NotifyError, type Integration, type Notification } from './notification.js';
import { Outbox, type OutboxEntry } from './outbox.js';
import { RecentSends, type SendOutcome } from './recent-sends.js';
import type { ReceiverConfig } from './receiver-schema.js';
import { DEFAULT_BACKOFF, retryDelay, type BackoffOptions } from './retry-delay.js';
import { buildRoute, type Route } from './route.js';
import type { SilenceApi } from './silence.js';
import { SilenceStore } from './silence-store.js';
import type { TemplateSet } from './templates/template-set.js';
import { TimeIntervals } from './time-intervals.js';

export type { SilenceApi } from './silence.js';

export interface NotifierHooks {
  /** One per send attempt: `failed` for every failed attempt (a give-up is logged on top). */
  onNotification?(receiver: string, integration: string, outcome: 'sent' | 'failed'): void;
  /** Outbox length after every change. */
  onQueueLength?(n: number): void;
  /** A notification abandoned after `giveUpAfterMs` or a non-retryable error. */
  onGiveUp?(receiver: string, integration: string): void;
}

export interface NotifierOptions {
  config: Config;
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
}

export interface AlertStatus {
  /** Ids of active silences matching the alert. */
  silencedBy: string[];
  /** Fingerprints of the firing alerts that inhibit it. */
  inhibitedBy: string[];
  /** Time intervals that mute it now on one of its routes (for `active_time_intervals`: `not:<name>`). */
  mutedBy: string[];
}

export const DEFAULT_GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** Upper bound of one timer, so a wall-clock jump never leaves the notifier asleep for long. */
const MAX_TIMER_MS = 60_000;

interface Pipeline {
  route: Route;
  receivers: Map<string, ReceiverConfig>;
  inhibitor: Inhibitor;
  intervals: TimeIntervals;
  externalUrl: string;
  displayTimezone: string;
}

/**
 * The notification stage: routes alerts to groups (Alertmanager's dispatcher), drops silenced, inhibited
 * and muted ones, decides with the notification log whether a group must be (re)sent, and delivers
 * through a persisted outbox with retries.
 *
 * Durability (see docs/notifications.md): a notification is written to the outbox before it is sent;
 * after a successful send the nflog entry (carrying the outbox id) is written, then the entry is removed.
 * A restart re-sends what is in the outbox minus what the nflog already records, so the only duplicate
 * possible is a crash between a successful send and the nflog write.
 *
 * Decisions are taken on the injected clock in `tick()`; timers only schedule calls to it.
 */
export class Notifier {
  readonly silences: SilenceApi;
  private readonly silenceStore: SilenceStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly hooks: NotifierHooks;
  private readonly integrationsFor: (receiver: ReceiverConfig) => Integration[];
  private readonly random: () => number;
  private readonly giveUpAfterMs: number;
  private readonly stopTimeoutMs: number;
  private readonly backoff: BackoffOptions;
  private readonly nflog: NotificationLog;
  private readonly outbox: Outbox;
  private pipeline: Pipeline;
  /** Where the daemon's HTTP server is bound; links use it when `server.external_url` is not set. */
  private listenUrl: string | undefined;
  private server: Config['server'];
  private readonly integrationCache = new Map<string, Integration[]>();
  /** The last full alert set (firing and resolved), by fingerprint. */
  private alerts = new Map<string, Alert>();
  private readonly groups = new Map<string, AlertGroup>();
  private readonly inflight = new Set<number>();
  /** Outbox entries added but not yet written: they must not be sent before they are durable. */
  private readonly notDurable = new Set<number>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private givenUp = 0;
  private readonly recent = new RecentSends();
  /** User templates; replaced on reload, read when integrations are (re)built. */
  private templates: TemplateSet | undefined;

  constructor(opts: NotifierOptions) {
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.hooks = opts.hooks ?? {};
    this.templates = opts.templates;
    this.integrationsFor =
      opts.integrationsFor ?? ((receiver) => createIntegrations(receiver, { logger: opts.logger, templates: this.templates, clock: opts.clock }));
    this.random = opts.random ?? Math.random;
    this.giveUpAfterMs = opts.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 5_000;
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.nflog = new NotificationLog(opts.state, opts.logger);
    this.outbox = new Outbox(opts.state, opts.logger);
    this.silenceStore = new SilenceStore(opts.clock, opts.state, opts.logger);
    this.silences = this.silenceStore;
    this.server = opts.config.server;
    this.pipeline = buildPipeline(opts.config, this.listenUrl);
  }

  /** Recent send attempts, newest first (bounded, in memory; the status page shows them). */
  recentSends(): SendOutcome[] {
    return this.recent.list();
  }

  /** Notifications abandoned since start (also logged as errors and reported through hooks.onGiveUp). */
  get givenUpCount(): number {
    return this.givenUp;
  }

  /** Notifications waiting in the outbox. */
  get queueLength(): number {
    return this.outbox.size;
  }

  async restore(): Promise<void> {
    await this.silenceStore.restore();
    await this.nflog.restore();
    await this.outbox.restore();
    const dropped = this.outbox.dropDelivered((key) => this.nflog.get(key)?.seq);
    if (dropped > 0) {
      this.logger.info({ dropped }, 'outbox entries already recorded as delivered were dropped');
      await this.persistOutbox();
    }
    if (this.outbox.size > 0) this.logger.info({ pending: this.outbox.size }, 'pending notifications restored from the outbox');
    this.hooks.onQueueLength?.(this.outbox.size);
  }

  start(): void {
    this.started = true;
    this.schedule();
  }

  /** The full current alert set: pending alerts are ignored; firing and recently resolved are grouped. */
  update(alerts: Alert[]): void {
    const now = this.clock.now();
    const previous = this.alerts;
    const next = new Map<string, Alert>();
    for (const alert of alerts) if (alert.state !== 'pending') next.set(alert.fingerprint, alert);
    this.alerts = next;
    for (const alert of next.values()) {
      const before = previous.get(alert.fingerprint);
      // A resolved alert is handed to its groups once; the alert store keeps repeating it for a while.
      if (alert.state === 'resolved' && before?.state === 'resolved') continue;
      this.insert(alert, now);
    }
    for (const [fp, alert] of previous) {
      // An alert that vanished without resolving (rule removed, state lost) is reported as resolved now.
      if (!next.has(fp) && alert.state === 'firing') this.insert({ ...alert, state: 'resolved', resolvedAt: now }, now);
    }
    this.schedule();
  }

  alertStatus(alert: Alert): AlertStatus {
    const now = this.clock.now();
    const mutedBy = new Set<string>();
    for (const route of this.pipeline.route.match(alert.labels)) for (const name of this.mutedBy(route, now)) mutedBy.add(name);
    return {
      silencedBy: this.silenceStore.silencedBy(alert.labels),
      inhibitedBy: this.pipeline.inhibitor.inhibitedBy(alert, this.firingAlerts()),
      mutedBy: [...mutedBy].sort(),
    };
  }

  /**
   * The URL the HTTP server is actually bound to. `server.listen` may say port 0 (or be overridden, as the demo
   * does); without this, links in messages and Alertmanager's generatorURL would point at port 0.
   */
  setListenUrl(url: string): void {
    this.listenUrl = url.replace(/\/+$/, '');
    this.pipeline = { ...this.pipeline, externalUrl: externalUrl({ server: this.server }, this.listenUrl) };
  }

  /** New routes, receivers, inhibit rules and intervals; the nflog and outbox are kept. Throws (keeping the old) when invalid. */
  reload(config: Config, templates?: TemplateSet): void {
    this.server = config.server;
    this.pipeline = buildPipeline(config, this.listenUrl);
    this.templates = templates;
    this.integrationCache.clear();
    // Groups are rebuilt from the current alerts; the nflog keeps them from being sent twice.
    this.groups.clear();
    const now = this.clock.now();
    for (const alert of this.alerts.values()) this.insert(alert, now);
    this.schedule();
  }

  /**
   * Do everything due at the clock's current time: flush due groups, send due outbox entries (one group's
   * messages in order). Resolves when the sends it started have finished. Tests call it directly.
   */
  async tick(): Promise<void> {
    const now = this.clock.now();
    const flush: AlertGroup[] = [];
    const resend: AlertGroup[] = [];
    for (const group of this.groups.values()) {
      if (group.nextFlushAt <= now) flush.push(group);
      else if (group.nextResendAt <= now) resend.push(group);
    }
    if (flush.length > 0 || resend.length > 0) await this.flushGroups(flush, resend, now);
    await this.sendDue();
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
        this.abort.abort();
        resolve();
      }, timeoutMs);
    });
    try {
      await Promise.race([this.sendDue(), timeUp]);
    } catch (err) {
      this.logger.error({ err: errorMessage(err) }, 'error while flushing the outbox at shutdown');
    } finally {
      clearTimeout(deadline);
    }
    await this.persistOutbox();
    await this.persistNflog();
    if (this.outbox.size > 0) this.logger.warn({ pending: this.outbox.size }, 'notifications still pending at shutdown; they are sent at the next start');
  }

  // --- grouping -------------------------------------------------------------------------------------

  private insert(alert: Alert, now: number): void {
    for (const route of this.pipeline.route.match(alert.labels)) {
      const labels = route.groupLabels(alert.labels);
      const key = route.groupKey(labels);
      let group = this.groups.get(key);
      if (!group) {
        group = new AlertGroup(route, key, labels, now);
        this.groups.set(key, group);
      }
      group.insert(alert, now);
    }
  }

  private firingAlerts(): Alert[] {
    return [...this.alerts.values()].filter((a) => a.state === 'firing');
  }

  private mutedBy(route: Route, now: number): string[] {
    const { intervals } = this.pipeline;
    const out = route.options.muteTimeIntervals.filter((name) => intervals.contains(name, now));
    const active = route.options.activeTimeIntervals;
    if (active.length > 0 && !active.some((name) => intervals.contains(name, now))) out.push(...active.map((n) => `not:${n}`));
    return out;
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

  private async flushGroups(flush: AlertGroup[], resend: AlertGroup[], now: number): Promise<void> {
    const firingAll = this.firingAlerts();
    const added: OutboxEntry[] = [];
    let nflogChanged = false;
    const passes: Array<[AlertGroup, boolean]> = [...flush.map((g): [AlertGroup, boolean] => [g, false]), ...resend.map((g): [AlertGroup, boolean] => [g, true])];
    for (const [group, resendOnly] of passes) {
      const reported = new Map(group.alerts);
      const integrations = this.integrationsOf(group.route.options.receiver);
      const muted = this.mutedBy(group.route, now);
      if (muted.length > 0) {
        this.logger.debug({ group: group.key, mutedBy: muted }, 'group muted by time interval');
      } else {
        const visible = [...reported.values()].filter(
          (a) => this.silenceStore.silencedBy(a.labels).length === 0 && this.pipeline.inhibitor.inhibitedBy(a, firingAll).length === 0,
        );
        const firing = visible.filter((a) => a.state === 'firing');
        const resolved = visible.filter((a) => a.state === 'resolved');
        for (const integration of integrations) {
          if (resendOnly && integration.resendInterval === undefined) continue;
          const outcome = this.dedup(group, integration, firing, resolved, now);
          if (outcome === 'log') nflogChanged = true;
          else if (outcome) added.push(outcome);
        }
      }
      if (resendOnly) {
        group.nextResendAt = now + minResend(integrations);
        continue;
      }
      group.flushed(reported, now);
      group.nextResendAt = now + minResend(integrations);
      if (group.empty) this.groups.delete(group.key);
    }
    if (added.length > 0) {
      for (const e of added) this.notDurable.add(e.id);
      // Durable before sent: a crash from here on re-sends from the outbox and the nflog stays consistent.
      await this.persistOutbox();
      for (const e of added) this.notDurable.delete(e.id);
      this.hooks.onQueueLength?.(this.outbox.size);
    }
    if (nflogChanged) await this.persistNflog();
  }

  /**
   * Alertmanager's dedup stage for one integration: send when something new fires, everything resolved,
   * something new resolved (with send_resolved), or the repeat interval passed. Compared against the
   * newest pending outbox entry when there is one (what the receiver will have been told), else the nflog.
   * Returns the new outbox entry, 'log' when only the nflog changes, or undefined.
   */
  private dedup(group: AlertGroup, integration: Integration, firing: Alert[], resolved: Alert[], now: number): OutboxEntry | 'log' | undefined {
    const receiver = group.route.options.receiver;
    const key = nflogKey(receiver, integration.kind, group.key);
    const pending = this.outbox.latestFor(key);
    const logged = this.nflog.get(key);
    // While a notification is pending, the repeat interval does not run: the pending one will be the repeat.
    const ref: Pick<NflogEntry, 'firing' | 'resolved' | 'sentAt'> | undefined = pending ? { ...pending, sentAt: now } : logged;
    const repeat = Math.min(group.route.options.repeatIntervalMs, integration.resendInterval ?? Infinity);
    const firingIds = firing.map((a) => a.fingerprint).sort();
    const resolvedIds = resolved.map((a) => a.fingerprint).sort();
    if (!needsUpdate(ref, firingIds, resolvedIds, integration.sendResolved, repeat, now)) return undefined;
    if (firing.length === 0 && !integration.sendResolved) {
      // Nothing to tell this integration, but the log must forget the firing alerts (as Alertmanager does).
      if (pending) return undefined;
      this.nflog.set(key, { firing: firingIds, resolved: resolvedIds, sentAt: now, seq: logged?.seq ?? 0 });
      return 'log';
    }
    const alerts = integration.sendResolved ? [...firing, ...resolved] : firing;
    const notification = buildNotification(this.pipeline, receiver, group, alerts);
    return this.outbox.add({
      key,
      receiver,
      integration: integration.kind,
      notification,
      firing: firingIds,
      resolved: resolvedIds,
      createdAt: now,
      attempts: 0,
      nextAttemptAt: now,
      giveUpAt: now + this.giveUpAfterMs,
    });
  }

  // --- delivery -------------------------------------------------------------------------------------

  private async sendDue(): Promise<void> {
    const tried = new Set<number>();
    // Rounds: after a head is delivered, the next entry of its group may be due at once.
    for (;;) {
      const now = this.clock.now();
      const due = this.outbox
        .heads()
        .filter((e) => e.nextAttemptAt <= now && !this.inflight.has(e.id) && !this.notDurable.has(e.id) && !tried.has(e.id));
      if (due.length === 0) return;
      for (const e of due) tried.add(e.id);
      await Promise.all(due.map((e) => this.attempt(e)));
      if (this.abort.signal.aborted) return;
    }
  }

  private findIntegration(receiver: string, kind: string): Integration | undefined {
    if (!this.pipeline.receivers.has(receiver)) return undefined;
    return this.integrationsOf(receiver).find((i) => i.kind === kind);
  }

  private async attempt(entry: OutboxEntry): Promise<void> {
    this.inflight.add(entry.id);
    try {
      const integration = this.findIntegration(entry.receiver, entry.integration);
      if (!integration) {
        await this.giveUp(entry, `receiver "${entry.receiver}" has no ${entry.integration} integration any more`);
        return;
      }
      try {
        await integration.send(entry.notification, this.abort.signal);
      } catch (err) {
        await this.failed(entry, err);
        return;
      }
      this.hooks.onNotification?.(entry.receiver, entry.integration, 'sent');
      this.recordSend(entry, 'sent');
      const now = this.clock.now();
      this.nflog.set(entry.key, { firing: entry.firing, resolved: entry.resolved, sentAt: now, seq: entry.id });
      // The at-least-once window: a crash before this write completes re-sends the entry on restart.
      await this.persistNflog();
      this.outbox.remove(entry.id);
      await this.persistOutbox();
      this.hooks.onQueueLength?.(this.outbox.size);
      this.logger.info(
        { receiver: entry.receiver, integration: entry.integration, group: entry.notification.groupKey, status: entry.notification.status, attempts: entry.attempts + 1 },
        'notification sent',
      );
    } finally {
      this.inflight.delete(entry.id);
    }
  }

  private async failed(entry: OutboxEntry, err: unknown): Promise<void> {
    entry.attempts += 1;
    this.hooks.onNotification?.(entry.receiver, entry.integration, 'failed');
    const now = this.clock.now();
    entry.lastError = this.redact(entry.receiver, errorMessage(err));
    this.recordSend(entry, 'failed', entry.lastError);
    const retryable = err instanceof NotifyError ? err.retryable : true;
    if (!retryable) {
      await this.giveUp(entry, `not retryable: ${entry.lastError}`);
      return;
    }
    if (now >= entry.giveUpAt) {
      await this.giveUp(entry, `still failing after ${entry.attempts} attempts: ${entry.lastError}`);
      return;
    }
    const retryAfterMs = err instanceof NotifyError ? err.retryAfterMs : undefined;
    entry.nextAttemptAt = now + retryDelay(entry.attempts, this.random, retryAfterMs, this.backoff);
    this.logger.warn(
      {
        receiver: entry.receiver,
        integration: entry.integration,
        group: entry.notification.groupKey,
        attempts: entry.attempts,
        retryAt: new Date(entry.nextAttemptAt).toISOString(),
        err: entry.lastError,
      },
      'notification failed; will retry',
    );
    await this.persistOutbox();
  }

  private async giveUp(entry: OutboxEntry, reason: string): Promise<void> {
    const now = this.clock.now();
    this.givenUp += 1;
    this.logger.error(
      {
        receiver: entry.receiver,
        integration: entry.integration,
        group: entry.notification.groupKey,
        status: entry.notification.status,
        alerts: entry.notification.alerts.map((a) => a.labels.alertname ?? a.fingerprint),
        attempts: entry.attempts,
        firstQueuedAt: new Date(entry.createdAt).toISOString(),
        reason,
      },
      'NOTIFICATION DROPPED: giving up, this notification was not delivered',
    );
    this.hooks.onGiveUp?.(entry.receiver, entry.integration);
    this.recordSend(entry, 'given_up', this.redact(entry.receiver, reason));
    // Recorded as if sent, so the same content is not retried at every flush; a change or the repeat interval sends again.
    this.nflog.set(entry.key, { firing: entry.firing, resolved: entry.resolved, sentAt: now, seq: entry.id });
    await this.persistNflog();
    this.outbox.remove(entry.id);
    await this.persistOutbox();
    this.hooks.onQueueLength?.(this.outbox.size);
  }

  private recordSend(entry: OutboxEntry, outcome: SendOutcome['outcome'], error?: string): void {
    this.recent.add({
      at: this.clock.now(),
      receiver: entry.receiver,
      integration: entry.integration,
      outcome,
      status: entry.notification.status,
      alertnames: [...new Set(entry.notification.alerts.map((a) => a.labels['alertname'] ?? a.fingerprint))],
      attempts: outcome === 'sent' ? entry.attempts + 1 : entry.attempts,
      ...(error !== undefined ? { error } : {}),
    });
  }

  private redact(receiver: string, text: string): string {
    const config = this.pipeline.receivers.get(receiver);
    if (!config) return text;
    const secrets = [config.slack?.webhook_url, config.email?.smtp.password, config.webhook?.url, config.webhook?.bearer_token].filter(
      (s): s is string => typeof s === 'string',
    );
    return redactSecrets(text, secrets);
  }

  private async persistOutbox(): Promise<void> {
    try {
      await this.outbox.persist();
    } catch (err) {
      // Sending goes on from memory: losing durability is better than losing notifications.
      this.logger.error({ err: errorMessage(err) }, 'cannot persist the notification outbox');
    }
  }

  private async persistNflog(): Promise<void> {
    try {
      await this.nflog.persist(this.clock.now());
    } catch (err) {
      this.logger.error({ err: errorMessage(err) }, 'cannot persist the notification log');
    }
  }

  // --- timers ---------------------------------------------------------------------------------------

  private schedule(): void {
    if (!this.started || this.stopped) return;
    let next = Infinity;
    for (const g of this.groups.values()) next = Math.min(next, g.nextFlushAt, g.nextResendAt);
    for (const e of this.outbox.heads()) if (!this.inflight.has(e.id)) next = Math.min(next, e.nextAttemptAt);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (next === Infinity) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.clock.now()));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tick().catch((err: unknown) => this.logger.error({ err: errorMessage(err) }, 'notifier tick failed'));
    }, delay);
    this.timer.unref();
  }
}

/** Alertmanager's needsUpdate. */
export function needsUpdate(
  ref: Pick<NflogEntry, 'firing' | 'resolved' | 'sentAt'> | undefined,
  firing: readonly string[],
  resolved: readonly string[],
  sendResolved: boolean,
  repeatMs: number,
  now: number,
): boolean {
  if (!ref) return firing.length > 0;
  const refFiring = new Set(ref.firing);
  if (!firing.every((fp) => refFiring.has(fp))) return true;
  // Everything resolved: sent (or logged) irrespective of send_resolved so the log forgets the firing ones.
  if (firing.length === 0) return ref.firing.length > 0;
  const refResolved = new Set(ref.resolved);
  if (sendResolved && !resolved.every((fp) => refResolved.has(fp))) return true;
  return ref.sentAt + repeatMs <= now;
}

function minResend(integrations: readonly Integration[]): number {
  return Math.min(Infinity, ...integrations.map((i) => (i.resendInterval !== undefined && i.resendInterval > 0 ? i.resendInterval : Infinity)));
}

function buildPipeline(config: Config, listenUrl?: string): Pipeline {
  const intervals = new TimeIntervals(config.mute_time_intervals);
  const route = buildRoute(
    config.route,
    config.receivers.map((r) => r.name),
    intervals.names(),
  );
  return {
    route,
    receivers: new Map(config.receivers.map((r) => [r.name, r])),
    inhibitor: new Inhibitor(config.inhibit_rules),
    intervals,
    externalUrl: externalUrl(config, listenUrl),
    displayTimezone: config.display_timezone,
  };
}

function externalUrl(config: Pick<Config, 'server'>, listenUrl?: string): string {
  if (config.server.external_url) return config.server.external_url.replace(/\/+$/, '');
  if (listenUrl) return listenUrl;
  const listen = config.server.listen;
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i);
  const port = listen.slice(i + 1);
  const shown = host === '' || host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  return `http://${shown}:${port}`;
}

function common(records: ReadonlyArray<Record<string, string>>): Labels {
  const [first, ...rest] = records;
  if (!first) return {};
  const out: Labels = {};
  for (const [name, value] of Object.entries(first)) if (rest.every((r) => r[name] === value)) out[name] = value;
  return out;
}

function buildNotification(pipeline: Pipeline, receiver: string, group: AlertGroup, alerts: Alert[]): Notification {
  const ordered = [...alerts.filter((a) => a.state === 'firing'), ...alerts.filter((a) => a.state !== 'firing')];
  return {
    receiver,
    groupKey: group.key,
    status: ordered.some((a) => a.state === 'firing') ? 'firing' : 'resolved',
    groupLabels: { ...group.labels },
    commonLabels: common(ordered.map((a) => a.labels)),
    commonAnnotations: common(ordered.map((a) => a.annotations)),
    alerts: ordered,
    externalUrl: pipeline.externalUrl,
    displayTimezone: pipeline.displayTimezone,
  };
}
