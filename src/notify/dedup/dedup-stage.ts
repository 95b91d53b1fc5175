import type { Alert } from '../../alerts/alert.js';
import type { Outbox } from '../deliver/outbox.js';
import type { VisibleAlerts } from '../mute/mute-stage.js';
import type { NflogEntry, NotificationLog } from './nflog.js';

/** What one integration of a group should get at a flush. */
export type DedupDecision =
  /** Send these alerts; `firing`/`resolved` are what the receiver will believe afterwards (for the log). */
  | { action: 'send'; alerts: Alert[]; firing: string[]; resolved: string[] }
  /** Nothing to tell this integration, but the log must forget firing alerts that are over (send_resolved: false). */
  | { action: 'forget'; firing: string[]; resolved: string[] }
  | { action: 'skip' };

export interface DedupInput {
  /** nflogKey(receiver, integration, group). */
  key: string;
  alerts: VisibleAlerts;
  sendResolved: boolean;
  repeatIntervalMs: number;
  now: number;
  /** Firing alerts someone acknowledged (contract 14): their repeat is held; what changes is still told. */
  acknowledged?: ReadonlySet<string>;
}

/**
 * Alertmanager's dedup stage, asked per integration: "first time, changed, resolved, or repeat interval
 * passed?" against what the receiver was last told — the newest pending outbox entry when there is one
 * (what it will have been told once the queue drains), else the notification log.
 *
 * The log records what the receiver believes fires. A silenced or inhibited alert the receiver was told
 * about stays in that belief (it does still fire), so hiding it sends nothing, and un-hiding it sends
 * nothing before the repeat interval unless something changed. RESOLVED is only ever said of alerts that
 * resolved: of a visible resolved alert, or of a hidden one this receiver was told fired.
 */
export class DedupStage {
  constructor(
    private readonly nflog: NotificationLog,
    private readonly outbox: Outbox,
  ) {}

  /**
   * What the receiver of `key` was last told (or will have been once its queue drains), if anything; `toldAt`
   * is when that was decided.
   */
  lastTold(key: string, now: number): (Pick<NflogEntry, 'firing' | 'resolved' | 'sentAt'> & { toldAt: number }) | undefined {
    const pending = this.outbox.latestFor(key);
    // While a notification is pending, the repeat interval does not run: the pending one will be the repeat.
    if (pending) return { firing: pending.firing, resolved: pending.resolved, sentAt: now, toldAt: pending.createdAt };
    const logged = this.nflog.get(key);
    return logged ? { ...logged, toldAt: logged.sentAt } : undefined;
  }

  decide(input: DedupInput): DedupDecision {
    const { alerts, sendResolved, repeatIntervalMs, now } = input;
    const ref = this.lastTold(input.key, now);
    const believed = new Set(ref?.firing ?? []);
    const firing = alerts.visible.filter((a) => a.state === 'firing');
    const toldAt = ref?.toldAt ?? -Infinity;
    // A resolution is told once: of an alert the receiver believes fires, or one that resolved since it was last
    // told anything (a restart hands the dispatcher resolved alerts again; they are not news).
    const resolved = [
      ...alerts.visible.filter((a) => a.state === 'resolved' && (believed.has(a.fingerprint) || (a.resolvedAt ?? Infinity) > toldAt)),
      ...alerts.hiddenResolved.filter((a) => believed.has(a.fingerprint)),
    ];
    const stillBelieved = alerts.hiddenFiring.filter((a) => believed.has(a.fingerprint)).map((a) => a.fingerprint);
    const firingIds = [...new Set([...firing.map((a) => a.fingerprint), ...stillBelieved])].sort();
    const resolvedIds = resolved.map((a) => a.fingerprint).sort();
    // The repeat interval runs only while some firing alert is not acknowledged.
    const acknowledged = input.acknowledged;
    const repeatMs = acknowledged && firing.length > 0 && firing.every((a) => acknowledged.has(a.fingerprint)) ? Infinity : repeatIntervalMs;
    if (!needsUpdate(ref, firing, resolvedIds, new Set(stillBelieved), sendResolved, repeatMs, now)) return { action: 'skip' };
    const told = sendResolved ? [...firing, ...resolved] : firing;
    // A message about nothing (what the receiver believes is over but no longer known here) is never sent.
    if (told.length === 0) return { action: 'forget', firing: firingIds, resolved: resolvedIds };
    return { action: 'send', alerts: told, firing: firingIds, resolved: resolvedIds };
  }
}

/**
 * Alertmanager's needsUpdate, over visible alerts and the receiver's belief: something new fires, something
 * it believes fires is over, something new resolved (send_resolved), or the repeat interval passed.
 */
export function needsUpdate(
  ref: Pick<NflogEntry, 'firing' | 'resolved' | 'sentAt'> | undefined,
  firing: readonly Alert[],
  resolved: readonly string[],
  stillBelieved: ReadonlySet<string>,
  sendResolved: boolean,
  repeatMs: number,
  now: number,
): boolean {
  // Never told anything: only a firing alert is news (a resolution of something never told is not).
  if (!ref) return firing.length > 0;
  const believed = new Set(ref.firing);
  if (!firing.every((a) => believed.has(a.fingerprint))) return true;
  // Nothing visible fires: news only if the receiver believes in something that is really over.
  if (firing.length === 0) return ref.firing.some((fp) => !stillBelieved.has(fp));
  const told = new Set(ref.resolved);
  if (sendResolved && !resolved.every((fp) => told.has(fp))) return true;
  return ref.sentAt + repeatMs <= now;
}
