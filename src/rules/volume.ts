import { z } from 'zod';
import type { Labels } from '../alerts/alert.js';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { formatDuration } from '../base/duration.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import { transferLabel, type Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { completeSpan, sourcesToJudge } from './complete-span.js';
import { formatTime } from '../util/format-time.js';
import { groupLabels } from './group-key.js';
import type { DataCompleteness, EvaluatorContext, RuleEvaluator } from './rule-evaluator.js';
import { labelNameSchema, ruleSchema } from './rule-schema.js';
import { defineRuleType } from './rule-type.js';
import { TimeCounts } from './time-counts.js';
import { withDisplayZone, type ZonedRule } from './rule-evaluator.js';
import type { GroupKeyOf } from './transfer-parts.js';

const RESULTS = { success: ['success'], error: ['error'], any: ['success', 'error'] } as const;

/**
 * volume: too few (or too many) matching transfers per group in a sliding `window`, against fixed bounds
 * (`min`, `max`) or against the same window `compare_to.offsets` earlier (yesterday, last week). With `for_each`
 * the expected keys are listed, so a partner that never sent anything counts as silent too. Judged only on
 * windows the poller has read completely: an outage is not a quiet partner.
 */
export const volumeSchema = ruleSchema('volume', {
  group_by: z.array(labelNameSchema).default([]),
  for_each: z.strictObject({ label: labelNameSchema, values: z.array(z.string().min(1)).min(1) }).optional(),
  result: z.enum(['success', 'error', 'any']).default('any'),
  window: duration().refine((ms) => ms > 0, 'window must be greater than 0'),
  min: z.number().int().min(1).optional(),
  max: z.number().int().min(0).optional(),
  compare_to: z
    .strictObject({
      offsets: z.array(duration().refine((ms) => ms > 0, 'offset must be greater than 0')).min(1),
      ratio_below: z.number().gt(0).lt(1).optional(),
      ratio_above: z.number().gt(1).optional(),
      /** The baseline (mean of the offset windows) below which no comparison is made. */
      min_baseline: z.number().gt(0).default(5),
    })
    .refine((c) => c.ratio_below !== undefined || c.ratio_above !== undefined, 'compare_to needs ratio_below or ratio_above')
    .optional(),
  for: duration().prefault('0'),
  keep_firing_for: duration().prefault('0'),
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
}).superRefine((rule, ctx) => {
  if (rule.min === undefined && rule.max === undefined && rule.compare_to === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'a volume rule needs min, max or compare_to' });
  }
  if (rule.for_each && rule.group_by.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['for_each'], message: 'for_each and group_by cannot be combined (for_each groups by its label)' });
  }
  if (rule.min !== undefined && rule.max !== undefined && rule.max < rule.min) {
    ctx.addIssue({ code: 'custom', path: ['max'], message: 'max must be at least min' });
  }
});
export type VolumeRule = z.output<typeof volumeSchema>;

const TEMPLATE_VARIABLES = [
  'transfers',
  'direction',
  'min',
  'max',
  'baseline',
  'ratio',
  'offsets',
  'window',
  'window_ms',
  'window_start',
  'window_end',
  'timezone',
];
const DEFAULT_ANNOTATIONS = {
  summary:
    '{{#if baseline}}{{transfers}} transfers in {{window}}, usually {{baseline}} ({{direction}} volume){{else}}{{transfers}} transfers in {{window}} ({{direction}} volume: {{#if min}}min {{min}}{{/if}}{{#if max}} max {{max}}{{/if}}){{/if}}',
  // The window's times are in every message already (see error_burst's default).
  description: '{{transfers}} matching transfers in the last {{window}}.',
};

/** How much longer than the window exact times are kept with `compare_to`, for a window whose data ends behind now. */
const RECENT_SLACK = 3_600_000;
/** The current window counts times to the second (whole-second timestamps count exactly). */
const WINDOW_RESOLUTION = 1000;
/** Baseline windows (`compare_to`) are counted in minutes: a week of them is 10,080 entries per group, whatever the traffic. */
const BASELINE_RESOLUTION = 60_000;

interface Group {
  labels: Labels;
  /** Times of the current window, to the second. */
  recent: TimeCounts;
  /** With `compare_to`: times to the minute, as far back as the longest offset reaches. */
  past: TimeCounts | undefined;
}

export class VolumeEvaluator implements RuleEvaluator {
  private readonly groups = new Map<string, Group>();
  private readonly builder: AlertBuilder;
  private readonly sources: string[];
  private readonly history: number;
  /** Times to the second are held after this (the last evaluation's horizon). */
  private recentFrom = -Infinity;
  private readonly expected: Set<string> | undefined;
  readonly onlyResult: 'success' | 'error' | undefined;

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;

  constructor(
    private readonly rule: ZonedRule<VolumeRule>,
    ctx: EvaluatorContext,
  ) {
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    this.keyOf = ctx.parts.groupKeyOf(rule.group_by);
    this.sources = sourcesToJudge(rule, ctx);
    this.history = rule.window + Math.max(0, ...(rule.compare_to?.offsets ?? []));
    this.onlyResult = rule.result === 'any' ? undefined : rule.result;
    if (rule.for_each) {
      const { label, values } = rule.for_each;
      this.expected = new Set(values);
      // Expected keys exist before their first transfer: silence from a key never seen is judged too.
      for (const value of this.expected) this.groups.set(value, this.newGroup({ [label]: value }));
    } else if (rule.group_by.length === 0) {
      this.groups.set('', this.newGroup({}));
    }
  }

  private newGroup(labels: Labels): Group {
    return { labels, recent: new TimeCounts(WINDOW_RESOLUTION), past: this.rule.compare_to ? new TimeCounts(BASELINE_RESOLUTION) : undefined };
  }

  observe(t: Transfer): boolean {
    if (this.rule.result !== 'any' && t.result !== this.rule.result) return false;
    const forEach = this.rule.for_each?.label;
    const key = forEach ? transferLabel(t, forEach) : this.keyOf(t);
    if (forEach && !this.expected?.has(key)) return false;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = this.newGroup(forEach ? { [forEach]: key } : groupLabels(t, this.rule.group_by))));
    group.recent.add(t.time);
    group.past?.add(t.time);
    return true;
  }

  evaluate(now: number, data: DataCompleteness): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const keepsEmpty = this.rule.for_each !== undefined || this.rule.group_by.length === 0;
    // The current window ends at most at now, so it never starts later than now - window: times to the second are
    // kept that far back (an hour more when there is a baseline, for data that ends behind now; beyond, minutes count).
    this.recentFrom = now - this.rule.window - (this.rule.compare_to ? RECENT_SLACK : 0);
    for (const [key, group] of this.groups) {
      group.recent.dropUpTo(this.recentFrom);
      group.past?.dropUpTo(now - this.history - BASELINE_RESOLUTION);
      if (group.recent.size === 0 && (group.past?.size ?? 0) === 0 && !keepsEmpty) this.groups.delete(key);
    }
    const span = completeSpan(this.sources, data, RESULTS[this.rule.result]);
    if (!span) return { rule: this.rule.name, alerts };
    const end = Math.min(now, span.until);
    const start = end - this.rule.window;
    if (start < span.from) return { rule: this.rule.name, alerts };
    // Only offsets whose window lies in the data read without gaps make the baseline.
    const offsets = (this.rule.compare_to?.offsets ?? []).filter((o) => start - o >= span.from);
    for (const group of this.groups.values()) {
      const transfers = start >= this.recentFrom || !group.past ? group.recent.countIn(start, end) : group.past.countIn(start, end);
      let baseline: number | undefined;
      if (group.past && offsets.length > 0) {
        const past = group.past;
        const counts = offsets.map((o) => past.countIn(start - o, end - o));
        baseline = counts.reduce((a, b) => a + b, 0) / counts.length;
      }
      const direction = this.verdict(transfers, baseline);
      if (!direction) continue;
      alerts.push(this.build(group.labels, direction, transfers, baseline, start, end));
    }
    return { rule: this.rule.name, alerts };
  }

  private verdict(transfers: number, baseline: number | undefined): 'low' | 'high' | undefined {
    const { min, max, compare_to: cmp } = this.rule;
    if (min !== undefined && transfers < min) return 'low';
    if (max !== undefined && transfers > max) return 'high';
    if (cmp && baseline !== undefined && baseline >= cmp.min_baseline) {
      if (cmp.ratio_below !== undefined && transfers < cmp.ratio_below * baseline) return 'low';
      if (cmp.ratio_above !== undefined && transfers > cmp.ratio_above * baseline) return 'high';
    }
    return undefined;
  }

  private build(labels: Labels, direction: 'low' | 'high', transfers: number, baseline: number | undefined, start: number, end: number): AlertCandidate {
    const tz = this.rule.timezone;
    const values: Record<string, number | string> = {
      transfers,
      direction,
      window_ms: this.rule.window,
      window: formatDuration(this.rule.window),
      window_end_ms: end,
    };
    if (this.rule.min !== undefined) values['min'] = this.rule.min;
    if (this.rule.max !== undefined) values['max'] = this.rule.max;
    if (baseline !== undefined) {
      values['baseline'] = Math.round(baseline * 10) / 10;
      if (baseline > 0) values['ratio'] = Math.round((transfers / baseline) * 1000) / 1000;
      values['offsets'] = (this.rule.compare_to?.offsets ?? []).map(formatDuration).join(', ');
    }
    return this.builder.build({
      groupLabels: labels,
      extraLabels: { direction },
      values,
      display: { window_start: formatTime(start, tz), window_end: formatTime(end, tz), timezone: tz },
    });
  }

  historyNeeded(): number {
    return this.history;
  }

  nextWakeup(): number | undefined {
    return undefined;
  }
}

export const volumeRuleType = defineRuleType<VolumeRule>({
  type: 'volume',
  schema: volumeSchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new VolumeEvaluator(withDisplayZone(rule, ctx), ctx),
});
