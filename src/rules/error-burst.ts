import { z } from 'zod';
import type { Labels, TransferSample } from '../alerts/alert.js';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import { formatDuration } from '../base/duration.js';
import type { Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { formatTime } from '../util/format-time.js';
import type { RuleEvaluator } from './rule-evaluator.js';
import { labelNameSchema, ruleSchema } from './rule-schema.js';
import { defineRuleType } from './rule-type.js';
import { dropUpTo, firstAfter, insertByTime } from './sorted-times.js';
import { TimeCounts } from './time-counts.js';
import { MAX_SAMPLES, latestOf } from './transfer-samples.js';
import { withDisplayZone, type ZonedRule } from './rule-evaluator.js';
import { TransferParts, type GroupKeyOf, type GroupLabelsOf } from './transfer-parts.js';

/** error_burst: at least `threshold` failed transfers within a sliding `window` (by occurrence time), per group. */
export const errorBurstSchema = ruleSchema('error_burst', {
  group_by: z.array(labelNameSchema).default([]),
  threshold: z.number().int().min(1),
  window: duration().refine((ms) => ms > 0, 'window must be greater than 0'),
  for: duration().prefault('0'),
  keep_firing_for: duration().prefault('0'),
  /** Zone in which the window's bounds are shown in messages. */
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
});
export type ErrorBurstRule = z.output<typeof errorBurstSchema>;

const TEMPLATE_VARIABLES = ['count', 'threshold', 'window', 'window_ms', 'window_start', 'window_end', 'timezone'];
const DEFAULT_ANNOTATIONS = {
  summary: '{{count}} failed transfers in {{window}}',
  // Not the window's times: messages show the window with its zone themselves, and a description repeating it
  // showed a second window, the last evaluation's, beside the one the alert fired with.
  description: '{{count}} failed transfers in the last {{window}} (threshold {{threshold}}).',
};

/**
 * A group counts its failures and keeps samples only of the few a message can show: in a failure storm (every
 * transfer of an hour's window failing) its memory is 16 bytes per distinct failure time, not a sample each.
 */
interface Group {
  labels: Labels;
  /** Failure times (exact), pruned to the window at each evaluation. */
  failures: TimeCounts;
  /**
   * Sorted by time: the MAX_SAMPLES latest failures up to the last evaluation of this group, and every one
   * observed since. The latest failures within a window at any later evaluation are among these: a failure
   * dropped here is older than MAX_SAMPLES kept ones, which leave the window after it. The samples themselves
   * (each has its time), shared by every rule that observed the transfer: no object of its own per rule.
   */
  shown: TransferSample[];
  /**
   * A firing group's last alert, while nothing can change it: from the evaluation `at` that made it until `until`,
   * when its earliest failure leaves the window, or until a failure is observed (which drops it). A group firing
   * for an hour was counted, sampled and built again at every evaluation (each page of a catch-up), to give the
   * same alert. With 1,000 rules and ~1,400 groups firing, keeping it read 13% more records/s (docs/benchmarks.md,
   * fifteenth round).
   */
  steady?: { at: number; until: number; candidate: AlertCandidate };
}

export class ErrorBurstEvaluator implements RuleEvaluator {
  private readonly groups = new Map<string, Group>();
  /**
   * Keys of the groups whose outcome can differ from their last evaluation's: observed since (holding at least
   * `threshold` failures, or firing then), at or above the threshold then, or holding failures stamped after it.
   * Any other group is below the threshold and stays below until it observes more: evaluating it again would
   * only prune it. With 1,000 rules grouping by file, visiting every group at each evaluation was most of the
   * evaluation's cost.
   */
  private readonly toVisit = new Set<string>();
  /**
   * When the next evaluation visits every group, to drop the expired failures of groups that went quiet. Not the
   * first evaluation: every group that can fire is in `toVisit`, and the others have nothing expired to drop yet
   * that a quarter window later cannot drop as well. After the first failures of a catch-up, 1,000 rules swept
   * 21,000 groups of one failure each (grouped by file) at that evaluation, to find nothing to tell.
   */
  private nextSweep: number | undefined;
  /**
   * Until when the last evaluation stands if nothing is observed (see RuleEvaluator.unchangedUntil): the earliest
   * end of a steady group's alert, or the next sweep; that evaluation's time when a group may change sooner (one
   * not steady, failures stamped ahead) or it cleared a group (a figure told once).
   */
  private stableUntil = -Infinity;
  /**
   * Groups at or above the threshold at the last evaluation, and those below it whose alert `keep_firing_for` still
   * holds: while one is below, its figures of now are reported at each evaluation, so the resolved message tells the
   * count of the window it resolved in (not of the evaluation it first dropped below).
   */
  private readonly above = new Set<string>();
  /** Until when the alert store may keep a cleared group's alert firing (keep_firing_for after it last fired, at most). */
  private readonly heldUntil = new Map<string, number>();
  private readonly builder: AlertBuilder;
  private readonly windowText: string;
  /** Whether a group's alert can stay as it was between evaluations (see Group.steady). */
  private readonly steadyAlerts: boolean;
  readonly onlyResult = 'error';

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;
  /** This rule's group labels of a transfer, shared in the same way. */
  private readonly labelsOf: GroupLabelsOf;

  constructor(
    private readonly rule: ZonedRule<ErrorBurstRule>,
    private readonly parts: TransferParts = new TransferParts(),
  ) {
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    this.keyOf = parts.groupKeyOf(rule.group_by);
    this.labelsOf = parts.groupLabelsOf(rule.group_by);
    this.windowText = formatDuration(rule.window);
    this.steadyAlerts = !this.builder.readsDisplay('window_start') && !this.builder.readsDisplay('window_end');
  }

  observe(t: Transfer): boolean {
    if (t.result !== 'error') return false;
    const key = this.keyOf(t);
    const shown = this.parts.sample(t);
    let group = this.groups.get(key);
    if (!group) {
      // Made with its first sample in place: a push into an empty array makes room for 17, and grouped by file
      // most groups never hold a second failure. Labels shared with the rules that group the same way.
      this.groups.set(key, (group = { labels: this.labelsOf(t), failures: new TimeCounts(), shown: [shown], steady: undefined }));
    } else {
      group.steady = undefined;
      insertByTime(group.shown, shown);
    }
    group.failures.add(t.time);
    // A group holding fewer failures than the threshold (expired ones included) cannot fire before it observes
    // more, so the next evaluation has nothing to tell of it unless it was firing: the sweep prunes it. Grouped
    // by file, nearly every failure is a group of one, and 1,000 rules visited each of them at the evaluation
    // after it came.
    if (group.failures.size >= this.rule.threshold || this.above.has(key)) this.toVisit.add(key);
    return true;
  }

  evaluate(now: number): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const cleared: AlertCandidate[] = [];
    const windowStart = now - this.rule.window;
    // The same for every group of this evaluation: formatted once, and only when some group fires.
    let display: Record<string, string> | undefined;
    // Every group about once per quarter window, so a quiet group's expired failures are kept at most that long.
    const sweep = this.nextSweep !== undefined && now >= this.nextSweep;
    if (sweep || this.nextSweep === undefined) this.nextSweep = now + Math.max(1, this.rule.window / 4);
    // `toVisit` and `above` are updated as groups are visited, not built anew: a steady group stays in both and
    // costs one step (a set of each per evaluation and two insertions per firing group were most of it).
    // Removing the group being visited from a set, or one visited already, is safe while iterating it; nothing is
    // added to `toVisit` that was not in it, except on a sweep, which walks `groups` instead.
    const toVisit = this.toVisit;
    const above = this.above;
    let stableUntil = this.nextSweep;
    for (const key of sweep ? this.groups.keys() : toVisit.values()) {
      const group = this.groups.get(key);
      if (!group) {
        toVisit.delete(key);
        above.delete(key);
        this.heldUntil.delete(key);
        continue;
      }
      const steady = group.steady;
      if (steady && now >= steady.at && now < steady.until) {
        alerts.push(steady.candidate);
        stableUntil = Math.min(stableUntil, steady.until);
        continue;
      }
      group.steady = undefined;
      group.failures.dropUpTo(windowStart);
      dropUpTo(group.shown, windowStart);
      // Records stamped in the future (clock skew) count once their time has come.
      const count = group.failures.countIn(windowStart, now);
      const future = group.failures.countAfter(now) > 0;
      let end = firstAfter(group.shown, now);
      if (end > MAX_SAMPLES) {
        group.shown.splice(0, end - MAX_SAMPLES);
        end = MAX_SAMPLES;
      }
      const firing = count >= this.rule.threshold;
      if (firing || above.has(key)) {
        const samples = latestOf(group.shown, end);
        const candidate = this.candidate(group, count, samples, (display ??= this.display(windowStart, now)));
        (firing ? alerts : cleared).push(candidate);
        // Steady until its earliest failure leaves the window, if no failure waits in the future and the
        // templates do not print the window's bounds (which move at every evaluation).
        const earliest = group.failures.earliest;
        if (firing && this.steadyAlerts && earliest !== undefined && !future) {
          group.steady = { at: now, until: earliest + this.rule.window, candidate };
        }
      }
      // A group firing now is visited next time (to tell when it stops), as is one with failures still to come, and
      // one whose alert keep_firing_for still holds (its figures are told until it resolves).
      // The store holds the alert until keep_firing_for after the last evaluation it was firing in, which was before
      // this one: told until then from the first evaluation below (a figure too many is ignored by the store).
      let heldUntil = this.heldUntil.get(key);
      if (!firing && heldUntil === undefined && above.has(key) && this.rule.keep_firing_for > 0) this.heldUntil.set(key, (heldUntil = now + this.rule.keep_firing_for));
      const held = !firing && heldUntil !== undefined && now < heldUntil;
      if (firing) {
        above.add(key);
        this.heldUntil.delete(key);
      } else if (!held) {
        above.delete(key);
        this.heldUntil.delete(key);
      }
      if (firing || future || held) toVisit.add(key);
      else toVisit.delete(key);
      // A group visited next time for a reason other than a steady alert can change by then.
      if (group.steady) stableUntil = Math.min(stableUntil, group.steady.until);
      else if (firing || future || held) stableUntil = now;
      if (group.failures.size === 0 && !held) this.groups.delete(key);
    }
    this.stableUntil = cleared.length > 0 ? now : stableUntil;
    return { rule: this.rule.name, alerts, cleared };
  }

  unchangedUntil(): number {
    return this.stableUntil;
  }

  private display(windowStart: number, now: number): Record<string, string> {
    return {
      window_start: formatTime(windowStart, this.rule.timezone),
      window_end: formatTime(now, this.rule.timezone),
      timezone: this.rule.timezone,
    };
  }

  private candidate(group: Group, count: number, samples: TransferSample[], display: Record<string, string>): AlertCandidate {
    return this.builder.build({
      groupLabels: group.labels,
      values: { count, threshold: this.rule.threshold, window_ms: this.rule.window, window: this.windowText },
      display,
      samples,
    });
  }

  /** Failures held in memory, expired ones not yet dropped included. */
  get heldFailures(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.failures.size;
    return n;
  }

  /** Groups held, and how many of them the next evaluation visits, and counted as firing at the last (each at most `groups`). */
  get trackedGroups(): { groups: number; toVisit: number; above: number } {
    return { groups: this.groups.size, toVisit: this.toVisit.size, above: this.above.size };
  }

  /** Samples held for messages: at most MAX_SAMPLES a group after its evaluation, plus what was observed since. */
  get heldSamples(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.shown.length;
    return n;
  }

  historyNeeded(): number {
    return this.rule.window;
  }

  nextWakeup(): number | undefined {
    return undefined;
  }
}

export const errorBurstRuleType = defineRuleType<ErrorBurstRule>({
  type: 'error_burst',
  schema: errorBurstSchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new ErrorBurstEvaluator(withDisplayZone(rule, ctx), ctx.parts),
});
