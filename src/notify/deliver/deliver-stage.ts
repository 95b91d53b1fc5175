import { hash } from 'node:crypto';
import type { Alert } from '../../alerts/alert.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage, isFencedError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import type { NflogEntry, NotificationLog } from '../dedup/nflog.js';
import { NotifyError, type Integration, type Notification } from '../notification.js';
import type { Outbox} from './outbox.js';
import { type OutboxEntry } from './outbox.js';
import { RecentSends, type SendOutcome } from './recent-sends.js';
import { supersededPhases } from '../templates/template-context.js';
import { DEFAULT_BACKOFF, retryDelay, type BackoffOptions } from '../../base/backoff.js';

export interface DeliveryHooks {
  /** One per send attempt: `failed` for every failed attempt (a give-up is logged on top). */
  onNotification?(receiver: string, integration: string, outcome: 'sent' | 'failed'): void;
  /** Outbox length after every change. */
  onQueueLength?(n: number): void;
  /** A notification abandoned after `giveUpAfterMs` or a non-retryable error. */
  onGiveUp?(receiver: string, integration: string): void;
  /**
   * Every attempt and every give-up, for the history (contract section 12). Awaited before the attempt's outcome
   * is taken as done (the notification log written, the outbox changed): a crash after it records nothing twice,
   * a crash before it re-sends the attempt, which is recorded then. A rejection is logged; delivery goes on.
   */
  onAttempt?(attempt: DeliveryAttempt): Promise<void>;
}

/** One attempt to deliver a notification (or the decision to give it up), as the history records it. */
export interface DeliveryAttempt {
  /** The same for the same attempt of the same notification, also after a restart. */
  id: string;
  at: number;
  receiver: string;
  integration: string;
  notification: Notification;
  /**
   * `in_flight`: told right before the request, with the id its outcome will have; it stays the record of the
   * attempt only if the process dies before the outcome (the receiver may have got it).
   */
  outcome: 'in_flight' | 'sent' | 'failed' | 'retrying' | 'gave_up';
  /** 1 for the first try; a give-up carries the number of the last one. */
  attempt: number;
  error: string | null;
  durationMs: number;
}

export interface DeliverStageOptions {
  nflog: NotificationLog;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  hooks: DeliveryHooks;
  /** The integration an entry is for, or undefined when its receiver no longer has one of that kind. */
  integration: (receiver: string, kind: string) => Integration | undefined;
  /** Scrub a receiver's secrets from a text (errors are shown in logs and on the status page). */
  redact: (receiver: string, text: string) => string;
  random: () => number;
  giveUpAfterMs: number;
  backoff?: BackoffOptions;
  /** Asked right before a send; false leaves the entry in the outbox unsent (see NotifierOptions.claim). */
  claim?: () => Promise<boolean>;
}

/** What the dedup stage decided to send, before it has an outbox id. */
export type NewDelivery = Omit<OutboxEntry, 'id'>;

/**
 * Delivery: a persisted outbox and one retrier. A notification is durable in the outbox before it is sent;
 * after a successful send the nflog records it (carrying the outbox id), then it leaves the outbox. A
 * restart re-sends what is in the outbox minus what the nflog already records, so the only duplicate left
 * is a crash while a send is in flight (see docs/reliability.md); HTTP receivers get an `Idempotency-Key`
 * that is the same on every attempt of one notification, so they can drop that duplicate themselves.
 *
 * When the state directory refuses a write (read-only, full) sending goes on from memory, and the whole
 * outbox and log are written again at the next tick once it accepts writes: nothing stays half-persisted.
 */
export class DeliverStage {
  private readonly nflog: NotificationLog;
  private readonly outbox: Outbox;
  private readonly inflight = new Set<number>();
  /** Outbox entries added but not yet written: they must not be sent before they are durable. */
  private readonly notDurable = new Set<number>();
  readonly abort = new AbortController();
  private readonly recent = new RecentSends();
  private givenUp = 0;
  /** A write failed: rewrite the whole outbox / log (a snapshot) as soon as the store takes writes again. */
  private outboxStale = false;
  private nflogStale = false;

  constructor(private readonly opts: DeliverStageOptions) {
    this.nflog = opts.nflog;
    this.outbox = opts.outbox;
  }

  get queueLength(): number {
    return this.outbox.size;
  }

  get givenUpCount(): number {
    return this.givenUp;
  }

  /** Recent send attempts, newest first (bounded, in memory; the status page shows them). */
  recentSends(): SendOutcome[] {
    return this.recent.list();
  }

  async restore(): Promise<void> {
    await this.nflog.restore();
    await this.outbox.restore();
    const dropped = this.outbox.dropDelivered((key) => this.nflog.get(key)?.seq);
    if (dropped > 0) {
      this.opts.logger.info({ dropped }, 'outbox entries already recorded as delivered were dropped');
      await this.persistOutbox();
    }
    if (this.outbox.size > 0) this.opts.logger.info({ pending: this.outbox.size }, 'pending notifications restored from the outbox');
    this.opts.hooks.onQueueLength?.(this.outbox.size);
  }

  /** Queue notifications; resolves once they are durable (or the store refused and sending goes on from memory). */
  async enqueue(deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const added = deliveries.map((d) => {
      const entry = this.outbox.add(d);
      // One key per notification, the same on every attempt and after a restart.
      entry.notification.idempotencyKey = `${hash('sha256', entry.key, 'hex').slice(0, 24)}-${entry.id}`;
      return entry;
    });
    for (const e of added) this.notDurable.add(e.id);
    // Durable before sent: a crash from here on re-sends from the outbox and the nflog stays consistent.
    await this.persistOutbox();
    for (const e of added) this.notDurable.delete(e.id);
    this.opts.hooks.onQueueLength?.(this.outbox.size);
  }

  /** Record in the log what a receiver believes without telling it anything (send_resolved: false). */
  async remember(key: string, entry: Omit<NflogEntry, 'seq'>): Promise<void> {
    // Not while a notification for the key is pending: the pending one will set the log when delivered.
    if (this.outbox.latestFor(key)) return;
    this.nflog.set(key, { ...entry, seq: this.nflog.get(key)?.seq ?? 0 });
    await this.persistNflog();
  }

  /** Send every due head of the outbox (one group's messages in order); resolves when those sends finished. */
  async sendDue(): Promise<void> {
    await this.rewriteStale();
    const tried = new Set<number>();
    // Rounds: after a head is delivered, the next entry of its group may be due at once.
    for (;;) {
      const now = this.opts.clock.now();
      const due = this.outbox
        .heads()
        .filter((e) => e.nextAttemptAt <= now && !this.inflight.has(e.id) && !this.notDurable.has(e.id) && !tried.has(e.id));
      if (due.length === 0) return;
      for (const e of due) tried.add(e.id);
      await Promise.all(due.map((e) => this.attempt(e)));
      if (this.abort.signal.aborted) return;
    }
  }

  /** The earliest retry, or Infinity. */
  nextWakeup(): number {
    let next = Infinity;
    for (const e of this.outbox.heads()) if (!this.inflight.has(e.id)) next = Math.min(next, e.nextAttemptAt);
    if (this.outboxStale || this.nflogStale) next = Math.min(next, this.opts.clock.now() + 1_000);
    return next;
  }

  /** Rewrite the outbox and a whole log snapshot at the next send round (the store lost them). */
  markStale(): void {
    this.outboxStale = true;
    this.nflogStale = true;
  }

  /** Write what must survive (graceful stop). */
  async flush(): Promise<void> {
    await this.persistOutbox();
    await this.persistNflog();
    await this.rewriteStale();
  }

  private async attempt(entry: OutboxEntry): Promise<void> {
    this.inflight.add(entry.id);
    try {
      const integration = this.opts.integration(entry.receiver, entry.integration);
      if (!integration) {
        await this.giveUp(entry, `receiver "${entry.receiver}" has no ${entry.integration} integration any more`);
        return;
      }
      // Claimed right before sending: a process that lost the right to send (a paused leader) sends nothing.
      if (this.opts.claim && !(await this.opts.claim())) {
        entry.nextAttemptAt = this.opts.clock.now() + 1_000;
        return;
      }
      // One id per request, told before it goes out: a process killed while it is in flight leaves that record,
      // and the request sent again after the restart is another one.
      const attemptId = `${this.attemptKey(entry)}:${entry.attempts + 1}:${this.opts.clock.now()}`;
      await this.outbox.beginAttempt(entry).catch(() => {
        /* only the attempt's number after a crash is at stake; the outbox write itself is reported where it fails */
      });
      await this.tellAttempt(entry, 'in_flight', entry.attempts + 1, null, 0, attemptId);
      const started = performance.now();
      try {
        await integration.send(entry.notification, this.abort.signal);
      } catch (err) {
        await this.failed(entry, err, performance.now() - started, attemptId);
        return;
      }
      const durationMs = performance.now() - started;
      this.opts.hooks.onNotification?.(entry.receiver, entry.integration, 'sent');
      this.record(entry, 'sent');
      await this.tellAttempt(entry, 'sent', entry.attempts + 1, null, durationMs, attemptId);
      this.nflog.set(entry.key, { firing: entry.firing, resolved: entry.resolved, sentAt: this.opts.clock.now(), seq: entry.id });
      // The at-least-once window: a crash before this append re-sends the entry on restart.
      await this.persistNflog();
      this.outbox.remove(entry.id);
      await this.persistOutbox();
      this.opts.hooks.onQueueLength?.(this.outbox.size);
      this.opts.logger.info(
        { receiver: entry.receiver, integration: entry.integration, group: entry.notification.groupKey, status: entry.notification.status, attempts: entry.attempts + 1 },
        'notification sent',
      );
    } finally {
      this.inflight.delete(entry.id);
    }
  }

  private async failed(entry: OutboxEntry, err: unknown, durationMs: number, attemptId: string): Promise<void> {
    entry.attempts += 1;
    this.opts.hooks.onNotification?.(entry.receiver, entry.integration, 'failed');
    const now = this.opts.clock.now();
    entry.lastError = this.opts.redact(entry.receiver, errorMessage(err));
    const retryable = err instanceof NotifyError ? err.retryable : true;
    // Cut short by a stop or a lost lease (not the receiver's answer): whoever sends next tells its own attempt.
    const outcome = this.abort.signal.aborted ? 'failed' : retryable && now < entry.giveUpAt ? 'retrying' : 'failed';
    this.record(entry, outcome, entry.lastError);
    await this.tellAttempt(
      entry,
      outcome,
      entry.attempts,
      this.abort.signal.aborted ? `cut short: this process stopped sending (${entry.lastError}); the receiver may have it` : entry.lastError,
      durationMs,
      attemptId,
    );
    if (!retryable) {
      await this.giveUp(entry, `not retryable: ${entry.lastError}`);
      return;
    }
    if (now >= entry.giveUpAt) {
      await this.giveUp(entry, `still failing after ${entry.attempts} attempts: ${entry.lastError}`);
      return;
    }
    const retryAfterMs = err instanceof NotifyError ? err.retryAfterMs : undefined;
    entry.nextAttemptAt = now + retryDelay(entry.attempts, this.opts.random, retryAfterMs, this.opts.backoff ?? DEFAULT_BACKOFF);
    this.opts.logger.warn(
      {
        receiver: entry.receiver,
        integration: entry.integration,
        group: entry.notification.groupKey,
        attempts: entry.attempts,
        retryAt: new Date(entry.nextAttemptAt).toISOString(),
        err: { type: err instanceof Error ? err.name : typeof err, message: entry.lastError },
      },
      'notification failed; will retry',
    );
    await this.persistOutbox();
  }

  private async giveUp(entry: OutboxEntry, reason: string): Promise<void> {
    const now = this.opts.clock.now();
    this.givenUp += 1;
    this.opts.logger.error(
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
    this.opts.hooks.onGiveUp?.(entry.receiver, entry.integration);
    this.record(entry, 'gave_up', this.opts.redact(entry.receiver, reason));
    await this.tellAttempt(entry, 'gave_up', entry.attempts, this.opts.redact(entry.receiver, reason), 0, `${this.attemptKey(entry)}:gave_up`);
    // Recorded as if sent, so the same content is not retried at every flush; a change or the repeat interval sends again.
    this.nflog.set(entry.key, { firing: entry.firing, resolved: entry.resolved, sentAt: now, seq: entry.id });
    await this.persistNflog();
    this.outbox.remove(entry.id);
    await this.persistOutbox();
    this.opts.hooks.onQueueLength?.(this.outbox.size);
  }

  /** The notification's key in attempt ids: its idempotency key, the same on every attempt and after restarts. */
  private attemptKey(entry: OutboxEntry): string {
    return entry.notification.idempotencyKey ?? `${entry.key}-${entry.id}`;
  }

  private async tellAttempt(entry: OutboxEntry, outcome: DeliveryAttempt['outcome'], attempt: number, error: string | null, durationMs: number, id: string): Promise<void> {
    if (!this.opts.hooks.onAttempt) return;
    try {
      await this.opts.hooks.onAttempt({
        id,
        at: this.opts.clock.now(),
        receiver: entry.receiver,
        integration: entry.integration,
        notification: entry.notification,
        outcome,
        attempt,
        error,
        durationMs,
      });
    } catch (err) {
      this.opts.logger.warn({ err: { type: 'HistoryJournalError', message: errorMessage(err) }, receiver: entry.receiver }, 'notification attempt not journaled for the history');
    }
  }

  private record(entry: OutboxEntry, outcome: SendOutcome['outcome'], error?: string): void {
    this.recent.add({
      at: this.opts.clock.now(),
      receiver: entry.receiver,
      integration: entry.integration,
      outcome,
      status: entry.notification.status,
      // A warning that gave way to its alert in this notification is that alert's story, not a second alert.
      alerts: [...new Set(withoutFoldedPhases(entry.notification.alerts).map(alertIdentity))],
      attempts: outcome === 'sent' ? entry.attempts + 1 : entry.attempts,
      ...(error !== undefined ? { error } : {}),
    });
  }

  private async persistOutbox(): Promise<void> {
    try {
      await this.outbox.persist();
      this.outboxStale = false;
    } catch (err) {
      // Sending goes on from memory: losing durability is better than losing notifications.
      this.outboxStale = true;
      this.logWriteFailure(err, 'notification outbox');
    }
  }

  private async persistNflog(): Promise<void> {
    try {
      await this.nflog.persist(this.opts.clock.now());
    } catch (err) {
      this.nflogStale = true;
      this.logWriteFailure(err, 'notification log');
    }
  }

  /** A fenced refusal is not a broken store: another replica leads now, and this one stops at its next step. */
  private logWriteFailure(err: unknown, what: string): void {
    if (isFencedError(err)) {
      this.opts.logger.warn({ role: 'leader', lease: 'leader', err: { type: 'Fenced', message: errorMessage(err) } }, `${what} not saved: fenced (the leader lease is not ours any more)`);
    } else {
      this.opts.logger.error({ err: { type: 'StateWriteError', message: errorMessage(err) } }, `cannot persist the ${what}; retrying every second`);
    }
  }

  /** After a refused write: the whole outbox and a whole log snapshot, so the files hold everything again. */
  private async rewriteStale(): Promise<void> {
    if (this.outboxStale) await this.persistOutbox();
    if (this.nflogStale) {
      try {
        await this.nflog.compact();
        this.nflogStale = false;
        this.opts.logger.info('notification log written in full again after a failed write');
      } catch {
        /* still refused: try again at the next tick */
      }
    }
  }
}

/** `TransferErrorBurst {mft_instance=PROD1, user=BANK1}`: an alert named so that two of one rule are told apart. */
function withoutFoldedPhases(alerts: readonly Alert[]): Alert[] {
  const folded = new Set([...supersededPhases(alerts).values()].map((a) => a.fingerprint));
  return alerts.filter((a) => !folded.has(a.fingerprint));
}

function alertIdentity(alert: Alert): string {
  const labels = Object.keys(alert.labels)
    .filter((k) => k !== 'alertname')
    .sort()
    .map((k) => `${k}=${alert.labels[k] ?? ''}`)
    .join(', ');
  const name = alert.labels['alertname'] ?? alert.fingerprint;
  return labels ? `${name} {${labels}}` : name;
}
