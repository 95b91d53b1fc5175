import type { Alert, Labels } from '../../alerts/alert.js';
import { AlertGroup } from './alert-group.js';
import type { Route } from './route.js';

/** The groups whose timers have run out: `flush` at group_wait/group_interval, `resend` between flushes. */
export interface DueGroups {
  flush: AlertGroup[];
  resend: AlertGroup[];
}

/**
 * Alertmanager's dispatcher: routes every alert to the groups of the routes it matches and keeps their
 * timers. It decides nothing about sending: the stages that follow (mute, dedup, deliver) do.
 */
export class Dispatcher {
  /** The last full alert set (firing and resolved), by fingerprint. */
  private alerts = new Map<string, Alert>();
  private readonly groups = new Map<string, AlertGroup>();

  constructor(private route: Route) {}

  /** The full current alert set from the alert store: pending alerts are ignored; firing and resolved are grouped. */
  update(alerts: readonly Alert[], now: number): void {
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
  }

  /** A new routing tree (reload): groups are rebuilt from the current alerts; the nflog keeps them from being sent twice. */
  reload(route: Route, now: number): void {
    this.route = route;
    this.groups.clear();
    for (const alert of this.alerts.values()) this.insert(alert, now);
  }

  /** The routes an alert goes to (for its status: time intervals are per route). */
  routesOf(alert: Alert): Route[] {
    return this.route.match(alert.labels);
  }

  firingAlerts(): Alert[] {
    const out: Alert[] = [];
    for (const a of this.alerts.values()) if (a.state === 'firing') out.push(a);
    return out;
  }

  due(now: number): DueGroups {
    const flush: AlertGroup[] = [];
    const resend: AlertGroup[] = [];
    for (const group of this.groups.values()) {
      if (group.nextFlushAt <= now) flush.push(group);
      else if (group.nextResendAt <= now) resend.push(group);
    }
    return { flush, resend };
  }

  /**
   * After a flush: the group forgets the resolved alerts it reported (`settled`), schedules its next flush and
   * is dropped once empty. Resolved alerts not settled (a muted route) stay until a later flush tells them.
   */
  flushed(group: AlertGroup, settled: ReadonlyMap<string, Alert>, now: number): void {
    group.flushed(settled, now);
    if (group.empty) this.groups.delete(group.key);
  }

  /** Every group with its route's receiver (Alertmanager's `/api/v2/alerts/groups`). */
  groupList(): Array<{ key: string; labels: Labels; receiver: string; route: Route; alerts: Alert[] }> {
    return [...this.groups.values()].map((g) => ({ key: g.key, labels: g.labels, receiver: g.route.options.receiver, route: g.route, alerts: [...g.alerts.values()] }));
  }

  /** The earliest group timer, or Infinity. */
  nextWakeup(): number {
    let next = Infinity;
    for (const g of this.groups.values()) next = Math.min(next, g.nextFlushAt, g.nextResendAt);
    return next;
  }

  private insert(alert: Alert, now: number): void {
    for (const route of this.route.match(alert.labels)) {
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
}
