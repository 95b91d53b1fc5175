import type { Alert, Labels } from '../../alerts/alert.js';
import type { Route } from './route.js';

/**
 * Alertmanager's aggregation group: the alerts of one route that share the route's `group_by` labels.
 * The first flush comes `group_wait` after the group appears (at once for an alert that has been firing
 * longer than that, e.g. after a restart); later flushes every `group_interval`.
 */
export class AlertGroup {
  readonly alerts = new Map<string, Alert>();
  nextFlushAt: number;
  /** When integrations with a `resendInterval` (Alertmanager) get the group again between flushes. */
  nextResendAt = Infinity;
  hasFlushed = false;

  constructor(
    readonly route: Route,
    /** Alertmanager's group key, unique across routes. */
    readonly key: string,
    readonly labels: Labels,
    createdAt: number,
  ) {
    this.nextFlushAt = createdAt + route.options.groupWaitMs;
  }

  insert(alert: Alert, now: number): void {
    this.alerts.set(alert.fingerprint, alert);
    const since = alert.firedAt ?? alert.activeAt;
    if (!this.hasFlushed && since + this.route.options.groupWaitMs <= now) this.nextFlushAt = Math.min(this.nextFlushAt, now);
  }

  /** After a flush: forget the resolved alerts it reported (unless they changed since) and schedule the next one. */
  flushed(reported: ReadonlyMap<string, Alert>, now: number): void {
    this.hasFlushed = true;
    for (const [fp, alert] of reported) {
      if (alert.state === 'resolved' && this.alerts.get(fp) === alert) this.alerts.delete(fp);
    }
    this.nextFlushAt = now + this.route.options.groupIntervalMs;
  }

  get empty(): boolean {
    return this.alerts.size === 0;
  }
}
