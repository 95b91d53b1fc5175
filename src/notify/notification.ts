import type { Alert, Labels } from '../alerts/alert.js';

/**
 * One message for one receiver about one alert group: what the dispatcher hands an integration.
 * Mirrors Alertmanager's webhook data model so the webhook integration can send it almost as is.
 */
export interface Notification {
  receiver: string;
  /** Stable key of the group within its route (Alertmanager's groupKey). */
  groupKey: string;
  /** `firing` when at least one alert of the group fires, else `resolved`. */
  status: 'firing' | 'resolved';
  groupLabels: Labels;
  commonLabels: Labels;
  commonAnnotations: Record<string, string>;
  /** Firing alerts first, then resolved ones. */
  alerts: Alert[];
  /** Base URL of the daemon, for links (`generatorURL`, "open in transfer-watch"). */
  externalUrl: string;
  /** IANA zone in which times are shown; the zone is always named next to a time. */
  displayTimezone: string;
  /**
   * The same on every attempt of this notification, also after a restart (`Idempotency-Key` header of HTTP
   * integrations): a receiver can drop the duplicate a crash while sending may cause. Set when queued.
   */
  idempotencyKey?: string;
  /**
   * Contract 14: this message escalates a group nobody acknowledged — step `step` of `of` of its route's `escalate`,
   * the group first told to `receiver` at `since` (epoch ms).
   */
  escalation?: { step: number; of: number; since: number; receiver: string } | undefined;
  /**
   * Contract 14: a signed link to the daemon's confirmation page that acknowledges this message's firing alerts
   * (`server.external_url` set, and some alert not acknowledged yet); mail shows it.
   */
  ackUrl?: string | undefined;
  /** The signed token of that link (the value of Slack's Acknowledge button, contract 14). */
  ackToken?: string | undefined;
}

/** What an integration reports when a send fails. */
export class NotifyError extends Error {
  readonly code = 'notify_failed';

  constructor(
    message: string,
    /** Whether trying again later can succeed (5xx, 429, network) or not (400, bad config). */
    readonly retryable: boolean,
    /** Wait asked for by the receiver (HTTP `Retry-After`), in ms. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'NotifyError';
  }
}

/** An integration (slack, email, alertmanager, webhook, console) bound to its receiver's config. */
export interface Integration {
  /** `slack`, `email`, ... (metric label `integration`). */
  readonly kind: string;
  readonly sendResolved: boolean;
  /**
   * When set, the dispatcher must call send() for each firing group at least this often (ms), even when
   * nothing changed: Alertmanager treats an alert it has not heard of for a while as resolved.
   */
  readonly resendInterval?: number;
  /** Deliver one notification; throws NotifyError on failure. Must not log secrets. */
  send(notification: Notification, signal?: AbortSignal): Promise<void>;
}
