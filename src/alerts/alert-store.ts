import { z } from 'zod';
import type { StateStore } from '../state/state-store.js';
import type { Clock } from '../util/clock.js';
import { errorFields, isFencedError } from '../util/errors.js';
import { sameItems } from '../util/same-items.js';
import type { Logger } from '../util/logger.js';
import type { Alert, AlertAck, AlertState } from './alert.js';
import type { AlertCandidate, AlertChange, RuleEvaluation } from './alert-candidate.js';
import { fingerprint } from './fingerprint.js';
import { SOURCE_DOWN_RULE, sourceDownCandidate } from './source-down.js';
import { alertEventId, alertEventSchema, type AlertEventKind, type AlertEventRecord } from './alert-event.js';

export const ALERTS_STATE_KEY = 'alerts';
const DEFAULT_RESOLVED_RETENTION = 3_600_000;
/**
 * History events kept at most while the history database is down (the oldest go first, counted and logged):
 * a long outage must not grow the alert snapshot without bound.
 */
export const MAX_JOURNALED_EVENTS = 50_000;
/**
 * The longest the snapshot's `lastActiveAt` may lag while nothing else changed. It only tells how long
 * `keep_firing_for` still holds a cleared alert after a restart or a leader change, so it is refreshed at this
 * pace rather than at every evaluation (with thousands of firing alerts a snapshot is megabytes).
 */
const LAST_ACTIVE_REFRESH_MS = 60_000;

const sampleSchema = z.object({
  time: z.number(),
  file: z.string(),
  code: z.number(),
  message: z.string(),
  user: z.string(),
  instance: z.string(),
});
const storedAlertSchema = z.object({
  rule: z.string(),
  fingerprint: z.string(),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  state: z.enum(['pending', 'firing', 'resolved']),
  activeAt: z.number(),
  firedAt: z.number().optional(),
  resolvedAt: z.number().optional(),
  lastActiveAt: z.number(),
  values: z.record(z.string(), z.union([z.number(), z.string()])),
  samples: z.array(sampleSchema),
  for: z.number(),
  keepFiringFor: z.number(),
  /** Active silences and inhibiting alerts as last recorded in the history (silenced/inhibited events). */
  silencedBy: z.array(z.string()).optional(),
  inhibitedBy: z.array(z.string()).optional(),
  /** When its first firing notification was delivered (time to notify is observed once per firing). */
  notifiedAt: z.number().optional(),
  /** The ack recorded in the history for its firing since `firedAt` (acknowledged/unacknowledged events). */
  ack: z.object({ id: z.string(), firedAt: z.number() }).optional(),
});
/**
 * `journal`: history events not yet written to the history database. They are saved in the same snapshot as
 * the transitions they describe, so a crash keeps both or neither: an event is never lost nor recorded twice.
 */
const snapshotSchema = z.object({ version: z.literal(1), alerts: z.array(storedAlertSchema), journal: z.array(alertEventSchema).optional() });
type StoredAlert = z.infer<typeof storedAlertSchema>;

/** What the store remembers of a rule's evaluation applied the full way (see `AlertStore.lastApplied`). */
interface LastApplied {
  evaluation: RuleEvaluation;
  steadyAt: number | undefined;
  /** Still the rule's record in `lastApplied` (false once replaced or forgotten). */
  current: boolean;
}

/**
 * The lifecycle of every alert: identity is the label set (fingerprint); pending → firing after the rule's
 * `for`; a firing alert whose condition cleared stays firing for `keep_firing_for`, then resolves; resolved
 * alerts are kept for `resolvedRetention` so the API and notifications can show them. The snapshot (key
 * `alerts`) keeps identity and activeAt across restarts, so a re-fired alert is the same alert.
 */
export class AlertStore {
  /** Firing alerts whose condition cleared and that keep_firing_for holds, until when (see Alert.held). */
  private readonly held = new Map<string, { until: number; clearedAt: number; keepFiringFor: number }>();
  private readonly byFingerprint = new Map<string, StoredAlert>();
  /**
   * The same alerts by rule, kept with `byFingerprint` (`put`, `drop`): an apply walks each evaluated rule's
   * alerts. Listing them afresh at every apply was a walk of every alert and an array per rule, ~1,400 alerts and
   * 1,000 arrays an evaluation of the bench's 1,000 rules.
   */
  private readonly byRule = new Map<string, Map<string, StoredAlert>>();
  /**
   * Each rule's evaluation as last applied. The rule engine hands a rule's evaluation on again, the same object,
   * while the rule observed nothing (RuleEngine): applied again, its alerts only need their `lastActiveAt`.
   *
   * `steadyAt`: the evaluation, applied again, found every alert it reports firing and no other; when it was last
   * applied so. Until one of the rule's alerts is put or dropped, or the rule is applied the full way, an apply of
   * that same evaluation only notes the time here, and the alerts' `lastActiveAt` is written into them (`settle`)
   * before anything reads it. With 1,000 rules and ~1,400 firing alerts, checking and stamping every alert at every
   * apply was a tenth of the bench pipeline's time.
   */
  private readonly lastApplied = new Map<string, LastApplied>();
  /**
   * The records of `lastApplied` by the position of their evaluation in the last apply's list: an engine hands its
   * rules' evaluations in the same order every time, so the record of the evaluation at position i is usually
   * found here without a lookup by rule name (which, for 1,000 rules whose evaluations stood, was half of each
   * apply). A record found here is used only while it is still the rule's (`current`).
   */
  private byPosition: Array<LastApplied | undefined> = [];
  /** The fingerprints an evaluation kept active, cleared for each rule of an apply (one set, not one per rule). */
  private readonly activeScratch = new Set<string>();
  /** No resolved alert is due to be pruned before this (see `prune`); -Infinity: not known, walk them. */
  private nextPruneAt = -Infinity;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly state: StateStore;
  private readonly retention: number;
  /** Whether memory differs from the last snapshot written in more than `lastActiveAt`. */
  private dirty = true;
  private savedAt = -Infinity;
  /** History events of transitions, oldest first, until the history database has them (see snapshotSchema). */
  private journal: AlertEventRecord[] = [];
  /**
   * How many of the journal's first events are in a saved snapshot. Only those may go to the database: an event
   * written there before its transition was saved would be written again, at another time, after a crash.
   */
  private durable = 0;
  private readonly recordHistory: boolean;
  /** History events dropped because the journal was full (a long database outage). */
  droppedEvents = 0;

  private readonly onResolved: ((alert: { labels: Record<string, string>; firedAt?: number | undefined }, at: number) => void) | undefined;

  constructor(opts: {
    clock: Clock;
    logger: Logger;
    state: StateStore;
    resolvedRetention?: number;
    /** Journal every transition for the history (contract section 12). */
    recordHistory?: boolean;
    /** A firing alert resolved at `at` (time to resolve). */
    onResolved?: (alert: { labels: Record<string, string>; firedAt?: number | undefined }, at: number) => void;
  }) {
    this.onResolved = opts.onResolved;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.state = opts.state;
    this.retention = opts.resolvedRetention ?? DEFAULT_RESOLVED_RETENTION;
    this.recordHistory = opts.recordHistory ?? false;
  }

  /** History events not yet in the database, oldest first (at most `max`). */
  unrecordedEvents(max = Infinity): AlertEventRecord[] {
    return this.journal.slice(0, Math.min(max, this.durable));
  }

  /** How many saved history events wait for the database (unrecordedEvents().length, without the copy). */
  get unrecordedCount(): number {
    return this.durable;
  }

  /** The history database has these events: they leave the journal at the next snapshot. */
  eventsRecorded(ids: ReadonlySet<string>): void {
    if (ids.size === 0) return;
    const before = this.journal.length;
    this.journal = this.journal.filter((e) => !ids.has(e.id));
    this.durable = Math.max(0, this.durable - (before - this.journal.length));
    if (this.journal.length !== before) this.dirty = true;
  }

  /**
   * The silences and inhibiting alerts that mute a firing alert now: a change is a silenced/unsilenced or
   * inhibited/uninhibited event, naming the silence or the inhibiting alert.
   */
  setMuted(fp: string, silencedBy: readonly string[], inhibitedBy: readonly string[], now: number): void {
    const stored = this.byFingerprint.get(fp);
    if (!stored || stored.state === 'resolved') return;
    const was = { silenced: stored.silencedBy ?? [], inhibited: stored.inhibitedBy ?? [] };
    for (const id of silencedBy) if (!was.silenced.includes(id)) this.record(stored, 'silenced', now, { silence_id: id });
    for (const id of was.silenced) if (!silencedBy.includes(id)) this.record(stored, 'unsilenced', now, { silence_id: id });
    for (const fpBy of inhibitedBy) if (!was.inhibited.includes(fpBy)) this.record(stored, 'inhibited', now, { inhibited_by: fpBy });
    for (const fpBy of was.inhibited) if (!inhibitedBy.includes(fpBy)) this.record(stored, 'uninhibited', now, { inhibited_by: fpBy });
    if (!sameItems(was.silenced, silencedBy) || !sameItems(was.inhibited, inhibitedBy)) {
      stored.silencedBy = [...silencedBy];
      stored.inhibitedBy = [...inhibitedBy];
      this.dirty = true;
    }
  }

  /**
   * The ack that holds a firing alert now (contract 14), as the notifier says: a change is an acknowledged or
   * unacknowledged event naming the ack, who and why. Returns when the alert fired, the first time an ack of its
   * current firing is recorded (time to acknowledge is observed then), else undefined.
   */
  setAcked(fp: string, ack: AlertAck | undefined, now: number, endedBy: (ackId: string) => string | undefined): number | undefined {
    const stored = this.byFingerprint.get(fp);
    if (!stored || stored.state !== 'firing' || stored.firedAt === undefined) return undefined;
    const was = stored.ack && stored.ack.firedAt === stored.firedAt ? stored.ack.id : undefined;
    if (was === ack?.id) return undefined;
    if (was !== undefined && ack === undefined) {
      this.record(stored, 'unacknowledged', now, { detail: { ack_id: was, by: endedBy(was) ?? '' } });
      stored.ack = undefined;
      this.dirty = true;
      return undefined;
    }
    if (ack === undefined) return undefined;
    // Recorded at the ack's own time: a follower took it, the leader saw it at its next evaluation.
    this.record(stored, 'acknowledged', Math.min(ack.at, now), { detail: { ack_id: ack.id, by: ack.by, comment: ack.comment } });
    stored.ack = { id: ack.id, firedAt: stored.firedAt };
    this.dirty = true;
    return was === undefined ? stored.firedAt : undefined;
  }

  /** An escalation step was queued for these alerts (contract 14): an escalated event each. */
  escalated(fps: readonly string[], detail: Record<string, string | number>, at: number): void {
    for (const fp of fps) {
      const stored = this.byFingerprint.get(fp);
      if (stored && stored.state === 'firing') this.record(stored, 'escalated', at, { detail });
    }
  }

  /**
   * A firing notification carrying the alert was delivered. Returns when the alert fired the first time this
   * is said of its current firing (time to notify is observed then), else undefined.
   */
  notified(fp: string, at: number): number | undefined {
    const stored = this.byFingerprint.get(fp);
    if (!stored || stored.state !== 'firing' || stored.firedAt === undefined || stored.notifiedAt !== undefined) return undefined;
    stored.notifiedAt = at;
    this.dirty = true;
    return stored.firedAt;
  }

  private record(stored: StoredAlert, event: AlertEventKind, at: number, about: { silence_id?: string; inhibited_by?: string; detail?: Record<string, string | number> } = {}): void {
    if (!this.recordHistory) return;
    if (this.journal.length >= MAX_JOURNALED_EVENTS) {
      this.journal.shift();
      this.durable = Math.max(0, this.durable - 1);
      this.droppedEvents++;
      if (this.droppedEvents === 1 || this.droppedEvents % 1_000 === 0) {
        this.logger.error({ dropped: this.droppedEvents, kept: MAX_JOURNALED_EVENTS }, 'HISTORY EVENTS DROPPED: the history database has been unreachable for long; the oldest alert events waiting for it are given up');
      }
    }
    this.journal.push({
      kind: 'alert',
      id: alertEventId(stored.fingerprint, event, at, about.silence_id ?? about.inhibited_by ?? eventDetailKey(about.detail)),
      at,
      event,
      fingerprint: stored.fingerprint,
      labels: { ...stored.labels },
      annotations: { ...stored.annotations },
      silence_id: about.silence_id ?? null,
      inhibited_by: about.inhibited_by ?? null,
      ...(about.detail ? { detail: about.detail } : {}),
    });
    this.dirty = true;
  }

  /** Load the alert state, replacing what is in memory (`quiet`: an HA follower refreshing its view each second). */
  async restore(opts: { quiet?: boolean } = {}): Promise<void> {
    const raw = await this.state.load(ALERTS_STATE_KEY);
    if (raw === undefined) return;
    const parsed = snapshotSchema.safeParse(raw);
    if (!parsed.success) {
      this.logger.warn({ err: parsed.error.message }, 'alert state unreadable; starting with no alerts');
      return;
    }
    this.byFingerprint.clear();
    this.byRule.clear();
    // The alerts restored may carry other figures than the evaluations last applied: apply those the full way.
    for (const rule of [...this.lastApplied.keys()]) this.forgetApplied(rule);
    for (const a of parsed.data.alerts) this.put(a);
    this.nextPruneAt = -Infinity;
    this.journal = parsed.data.journal ?? [];
    this.durable = this.journal.length;
    this.dirty = false;
    this.savedAt = this.clock.now();
    if (!opts.quiet) this.logger.info({ alerts: parsed.data.alerts.length }, 'alert state restored');
  }

  /**
   * Write the snapshot when an alert was added, changed (state, figures, annotations, samples) or dropped since
   * the last one, or its `lastActiveAt`s are LAST_ACTIVE_REFRESH_MS old; `force` writes it anyway (shutdown,
   * writing back to a Redis that lost its data). Evaluations in which nothing changed write nothing.
   */
  async flush(opts: { force?: boolean } = {}): Promise<void> {
    const now = this.clock.now();
    if (!opts.force && !this.dirty && now - this.savedAt < LAST_ACTIVE_REFRESH_MS) return;
    // Cleared before the write: a change made while it is under way marks the next one.
    this.dirty = false;
    // The steady rules' alerts were last active when their rule was last applied (they stay steady).
    for (const [rule, { steadyAt }] of this.lastApplied) if (steadyAt !== undefined) this.activeUntil(rule, steadyAt);
    const journal = [...this.journal];
    const saved = new Set(journal.map((e) => e.id));
    try {
      await this.state.save(ALERTS_STATE_KEY, { version: 1, alerts: [...this.byFingerprint.values()], ...(journal.length > 0 ? { journal } : {}) });
      this.savedAt = now;
      // The events of that snapshot that are still waiting (the database may have taken some meanwhile).
      let n = 0;
      while (n < this.journal.length && saved.has(this.journal[n]?.id ?? '')) n++;
      this.durable = Math.max(this.durable, n);
    } catch (err) {
      this.dirty = true;
      // A fenced write (the lease is not ours any more) is the caller's to tell: it is no store failure.
      if (!isFencedError(err)) this.logger.error({ err: errorFields(err) }, 'cannot save alert state');
      throw err;
    }
  }

  apply(evaluations: RuleEvaluation[], now: number): AlertChange[] {
    const changes: AlertChange[] = [];
    const active = this.activeScratch;
    const byPosition = this.byPosition;
    for (let i = 0; i < evaluations.length; i++) {
      const ev = evaluations[i] as RuleEvaluation;
      let last = byPosition[i];
      if (last === undefined || last.evaluation !== ev || !last.current) byPosition[i] = last = this.lastApplied.get(ev.rule);
      if (last?.evaluation === ev && (last.steadyAt !== undefined || this.reportedAgain(ev))) {
        last.steadyAt = now;
        continue;
      }
      this.settle(ev.rule);
      active.clear();
      for (const candidate of ev.alerts) active.add(this.activate(ev.rule, candidate, now, changes));
      // (One that reports an alert twice is always applied the full way: `reportedAgain` counts alerts.)
      if (active.size === ev.alerts.length) {
        byPosition[i] = this.setApplied(ev.rule, ev);
      } else {
        this.forgetApplied(ev.rule);
        byPosition[i] = undefined;
      }
      const stored = this.byRule.get(ev.rule);
      // Every alert of the rule is one it still reports (each reported one is the rule's: see `activate`): nothing
      // to end, as at most evaluations of most rules.
      if (!stored || stored.size === active.size) continue;
      // Most evaluations resolve and clear nothing: no maps for them (1,000 rules made 2,000 empty maps an apply).
      const finals = ev.resolved?.length ? new Map(ev.resolved.map((c) => [this.fingerprintOf(c), c])) : undefined;
      const cleared = ev.cleared?.length ? new Map(ev.cleared.map((c) => [this.fingerprintOf(c), c])) : undefined;
      // Live: a pending alert ended here leaves the map, which iteration allows; nothing is added meanwhile.
      for (const alert of stored.values()) {
        if (alert.state === 'resolved' || active.has(alert.fingerprint)) continue;
        const figures = cleared?.get(alert.fingerprint);
        if (figures && alert.state === 'firing' && (alert.annotations !== figures.annotations || alert.values !== figures.values || alert.samples !== figures.samples)) {
          Object.assign(alert, { annotations: figures.annotations, values: figures.values, samples: figures.samples });
          this.dirty = true;
        }
        const words = finals?.get(alert.fingerprint);
        // Words that end an earlier episode leave one that began after it as it is.
        const final = words && (words.endsEpisodeBefore === undefined || alert.activeAt < words.endsEpisodeBefore) ? words : undefined;
        // What the rule could not judge stays as it is (a restart or a takeover reading its way to the present
        // resolves nothing the history does not show ended); only an end it reports with its words ends it.
        if (!final && ev.undecided) continue;
        // A late arrival ends the alert at once; otherwise keep_firing_for bridges a short gap (no flapping).
        if (!final && alert.state === 'firing' && now < alert.lastActiveAt + alert.keepFiringFor) {
          this.held.set(alert.fingerprint, { until: alert.lastActiveAt + alert.keepFiringFor, clearedAt: alert.lastActiveAt, keepFiringFor: alert.keepFiringFor });
          continue;
        }
        this.held.delete(alert.fingerprint);
        this.deactivate(alert, now, changes, final);
      }
    }
    active.clear();
    this.prune(now);
    return changes;
  }

  /**
   * An evaluation applied before, applied again: true when the rule's alerts are exactly the ones it reports and all
   * of them fire, so that nothing can change but the time they were last active (which the caller notes as the
   * rule's `steadyAt`). Otherwise (one pending, held, resolved or gone meanwhile) false, and the evaluation is
   * applied the full way.
   */
  private reportedAgain(ev: RuleEvaluation): boolean {
    const ofRule = this.byRule.get(ev.rule);
    if ((ofRule?.size ?? 0) !== ev.alerts.length) return false;
    for (const candidate of ev.alerts) {
      if (ofRule?.get(this.fingerprintOf(candidate))?.state !== 'firing') return false;
    }
    return true;
  }

  /** The rule's `evaluation`, applied the full way: its record, a new one. */
  private setApplied(rule: string, evaluation: RuleEvaluation): LastApplied {
    this.forgetApplied(rule);
    const applied: LastApplied = { evaluation, steadyAt: undefined, current: true };
    this.lastApplied.set(rule, applied);
    return applied;
  }

  /** The rule has no evaluation applied (none, or one to apply the full way next time). */
  private forgetApplied(rule: string): void {
    const last = this.lastApplied.get(rule);
    if (last === undefined) return;
    last.current = false;
    this.lastApplied.delete(rule);
  }

  /** A steady rule's alerts get the time it was last applied as their `lastActiveAt`, and it is steady no more. */
  private settle(rule: string): void {
    const last = this.lastApplied.get(rule);
    const at = last?.steadyAt;
    if (last === undefined || at === undefined) return;
    last.steadyAt = undefined;
    this.activeUntil(rule, at);
  }

  /** The rule's alerts were active until `at`. */
  private activeUntil(rule: string, at: number): void {
    for (const alert of this.byRule.get(rule)?.values() ?? []) if (alert.lastActiveAt < at) alert.lastActiveAt = at;
  }

  /** An alert into both maps, in place of any of the same fingerprint. */
  private put(stored: StoredAlert): void {
    this.settle(stored.rule);
    const before = this.byFingerprint.get(stored.fingerprint);
    if (before) this.drop(before);
    this.byFingerprint.set(stored.fingerprint, stored);
    let ofRule = this.byRule.get(stored.rule);
    if (!ofRule) this.byRule.set(stored.rule, (ofRule = new Map()));
    ofRule.set(stored.fingerprint, stored);
  }

  /** An alert out of both maps. */
  private drop(stored: StoredAlert): void {
    this.settle(stored.rule);
    this.byFingerprint.delete(stored.fingerprint);
    const ofRule = this.byRule.get(stored.rule);
    ofRule?.delete(stored.fingerprint);
    if (ofRule?.size === 0) this.byRule.delete(stored.rule);
  }

  setSourceDown(source: string, down: boolean, now: number, detail?: string): AlertChange[] {
    return this.setBuiltin(sourceDownCandidate(source, detail), down, now);
  }

  /** Raise or resolve a built-in alert (not from a rule file: a reload keeps it). */
  setBuiltin(candidate: AlertCandidate, active: boolean, now: number): AlertChange[] {
    const changes: AlertChange[] = [];
    if (active) {
      this.activate(SOURCE_DOWN_RULE, candidate, now, changes);
    } else {
      const stored = this.byFingerprint.get(this.fingerprintOf(candidate));
      if (stored && stored.state !== 'resolved') this.deactivate(stored, now, changes, undefined);
    }
    return changes;
  }

  /** Resolve the alerts of rules that no longer exist (after a reload). Built-in alerts are kept. */
  retainRules(ruleNames: readonly string[], now: number): AlertChange[] {
    const keep = new Set(ruleNames);
    const changes: AlertChange[] = [];
    for (const rule of [...this.lastApplied.keys()]) {
      if (keep.has(rule)) continue;
      this.settle(rule);
      this.forgetApplied(rule);
    }
    for (const stored of [...this.byFingerprint.values()]) {
      if (stored.rule === SOURCE_DOWN_RULE || keep.has(stored.rule) || stored.state === 'resolved') continue;
      this.deactivate(stored, now, changes, undefined);
    }
    return changes;
  }

  alerts(): Alert[] {
    this.prune(this.clock.now());
    return [...this.byFingerprint.values()].map((a) => {
      const held = a.state === 'firing' ? this.held.get(a.fingerprint) : undefined;
      return held ? { ...toAlert(a), held: { ...held } } : toAlert(a);
    });
  }

  private fingerprintOf(c: AlertCandidate): string {
    return c.fingerprint ?? fingerprint(c.labels);
  }

  private activate(rule: string, c: AlertCandidate, now: number, changes: AlertChange[]): string {
    const fp = this.fingerprintOf(c);
    this.held.delete(fp);
    const current = this.byFingerprint.get(fp);
    if (!current || current.state === 'resolved') {
      const state: AlertState = c.for > 0 ? 'pending' : 'firing';
      const stored: StoredAlert = {
        rule,
        fingerprint: fp,
        labels: c.labels,
        annotations: c.annotations,
        state,
        activeAt: now,
        ...(state === 'firing' ? { firedAt: now } : {}),
        lastActiveAt: now,
        values: c.values,
        samples: c.samples,
        for: c.for,
        keepFiringFor: c.keepFiringFor,
      };
      this.put(stored);
      this.dirty = true;
      this.record(stored, state, now);
      changes.push({ fingerprint: fp, from: current ? 'resolved' : 'inactive', to: state, alert: toAlert(stored) });
      return fp;
    }
    // The same labels from another rule (names are unique, so not seen): the alert is the reporting rule's now, so
    // that an apply finds every alert a rule reported among that rule's.
    if (current.rule !== rule) {
      this.drop(current);
      current.rule = rule;
      this.put(current);
      this.dirty = true;
    }
    // A candidate whose group did not change is handed back as it was (alerts driven by change): same objects,
    // and nothing to write but the time it was last active.
    if (current.annotations !== c.annotations || current.values !== c.values || current.samples !== c.samples || current.for !== c.for || current.keepFiringFor !== c.keepFiringFor) {
      this.dirty = true;
      Object.assign(current, { annotations: c.annotations, values: c.values, samples: c.samples, for: c.for, keepFiringFor: c.keepFiringFor });
    }
    current.lastActiveAt = now;
    if (current.state === 'pending' && now - current.activeAt >= current.for) {
      current.state = 'firing';
      current.firedAt = now;
      this.dirty = true;
      this.record(current, 'firing', now);
      changes.push({ fingerprint: fp, from: 'pending', to: 'firing', alert: toAlert(current) });
    }
    return fp;
  }

  private deactivate(stored: StoredAlert, now: number, changes: AlertChange[], final: AlertCandidate | undefined): void {
    this.dirty = true;
    this.held.delete(stored.fingerprint);
    if (stored.state === 'pending') {
      // A pending alert never told anyone; it just goes away (as in Prometheus).
      this.drop(stored);
      // Recorded as resolved: the history shows the pending alert ended (it never fired, nobody was told).
      this.record(stored, 'resolved', now);
      changes.push({ fingerprint: stored.fingerprint, from: 'pending', to: 'inactive', alert: toAlert(stored) });
      return;
    }
    if (final) Object.assign(stored, { annotations: final.annotations, values: final.values, samples: final.samples });
    stored.state = 'resolved';
    stored.resolvedAt = now;
    this.nextPruneAt = Math.min(this.nextPruneAt, now + this.retention);
    this.record(stored, 'resolved', now);
    this.onResolved?.(stored, now);
    changes.push({ fingerprint: stored.fingerprint, from: 'firing', to: 'resolved', alert: toAlert(stored) });
  }

  /**
   * Resolved alerts past their retention leave. A walk of every alert, so only when one is due: an apply of the
   * bench's 1,000 rules walked ~1,400 firing alerts for nothing, evaluation after evaluation.
   */
  private prune(now: number): void {
    if (now < this.nextPruneAt) return;
    let next = Infinity;
    for (const a of this.byFingerprint.values()) {
      if (a.state !== 'resolved') continue;
      const until = (a.resolvedAt ?? 0) + this.retention;
      if (until <= now) {
        this.drop(a);
        this.dirty = true;
      } else {
        next = Math.min(next, until);
      }
    }
    this.nextPruneAt = next;
  }
}

function toAlert(a: StoredAlert): Alert {
  return {
    fingerprint: a.fingerprint,
    labels: { ...a.labels },
    annotations: { ...a.annotations },
    state: a.state,
    activeAt: a.activeAt,
    ...(a.firedAt !== undefined ? { firedAt: a.firedAt } : {}),
    ...(a.resolvedAt !== undefined ? { resolvedAt: a.resolvedAt } : {}),
    values: { ...a.values },
    samples: a.samples.map((s) => ({ ...s })),
  };
}

/** What tells two events of one alert at one instant apart: an ack's id, an escalation's step. */
function eventDetailKey(detail: Record<string, string | number> | undefined): string {
  if (!detail) return '';
  return String(detail['ack_id'] ?? (detail['step'] !== undefined ? `step${detail['step']}` : ''));
}
