import type { Alert } from '../../alerts/alert.js';
import type { Route } from '../dispatch/route.js';
import type { Inhibitor } from './inhibitor.js';
import type { SilenceStore } from './silence-store.js';
import type { TimeIntervals } from './time-intervals.js';

export interface AlertStatus {
  /** Ids of active silences matching the alert. */
  silencedBy: string[];
  /** Fingerprints of the firing alerts that inhibit it. */
  inhibitedBy: string[];
  /** Time intervals that mute it now on one of its routes (for `active_time_intervals`: `not:<name>`). */
  mutedBy: string[];
}

/** What a group may tell its receiver at one flush. */
export interface VisibleAlerts {
  /** The route is outside its active time (mute/active_time_intervals): nothing is sent at all. */
  mutedBy: string[];
  /** Alerts neither silenced nor inhibited. */
  visible: Alert[];
  /**
   * Resolved alerts that are silenced or inhibited now. They are told anyway to a receiver that was told they
   * fired (the dedup stage decides, per integration): hiding a resolution would leave a page open for ever.
   */
  hiddenResolved: Alert[];
  /** Firing alerts that are silenced or inhibited now: a receiver told they fire keeps believing it (truly). */
  hiddenFiring: Alert[];
}

/**
 * Alertmanager's mute stages in one place: time intervals of the group's route, then silences, then
 * inhibition. A hidden alert leaves the notification; a group with nothing visible sends nothing (the
 * dedup stage is not even asked, so the notification log keeps what the receiver was told).
 */
export class MuteStage {
  constructor(
    private readonly silences: SilenceStore,
    private readonly inhibitor: Inhibitor,
    private readonly intervals: TimeIntervals,
  ) {}

  /** The time intervals that mute `route` at `now`. */
  mutedBy(route: Route, now: number): string[] {
    const out = route.options.muteTimeIntervals.filter((name) => this.intervals.contains(name, now));
    const active = route.options.activeTimeIntervals;
    if (active.length > 0 && !active.some((name) => this.intervals.contains(name, now))) out.push(...active.map((n) => `not:${n}`));
    return out;
  }

  hidden(alert: Alert, firing: readonly Alert[]): boolean {
    return this.silences.silencedBy(alert.labels).length > 0 || this.inhibitor.inhibitedBy(alert, firing).length > 0;
  }

  filter(route: Route, alerts: Iterable<Alert>, firing: readonly Alert[], now: number): VisibleAlerts {
    const mutedBy = this.mutedBy(route, now);
    const visible: Alert[] = [];
    const hiddenResolved: Alert[] = [];
    const hiddenFiring: Alert[] = [];
    if (mutedBy.length > 0) return { mutedBy, visible, hiddenResolved, hiddenFiring };
    for (const alert of alerts) {
      if (!this.hidden(alert, firing)) visible.push(alert);
      else if (alert.state === 'resolved') hiddenResolved.push(alert);
      else hiddenFiring.push(alert);
    }
    return { mutedBy, visible, hiddenResolved, hiddenFiring };
  }

  /** Why an alert is or is not shown (API and status page), over every route it takes. */
  status(alert: Alert, routes: readonly Route[], firing: readonly Alert[], now: number): AlertStatus {
    const mutedBy = new Set<string>();
    for (const route of routes) for (const name of this.mutedBy(route, now)) mutedBy.add(name);
    return {
      silencedBy: this.silences.silencedBy(alert.labels),
      inhibitedBy: this.inhibitor.inhibitedBy(alert, firing),
      mutedBy: [...mutedBy].sort(),
    };
  }
}
