import { z } from 'zod';
import type { TransferSample } from '../alerts/alert.js';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { formatDuration } from '../base/duration.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import type { Labels } from '../alerts/alert.js';
import type { Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { completeSpan, sourcesToJudge } from './complete-span.js';
import { formatTime } from '../util/format-time.js';
import { groupLabels } from './group-key.js';
import type { DataCompleteness, EvaluatorContext, RuleEvaluator } from './rule-evaluator.js';
import { labelNameSchema, ruleSchema } from './rule-schema.js';
import { defineRuleType } from './rule-type.js';
import { dropUpTo, entriesIn, insertByTime } from './sorted-times.js';
import { TimeCounts } from './time-counts.js';
import { latestSamples } from './transfer-samples.js';
import { withDisplayZone, type ZonedRule } from './rule-evaluator.js';
import type { GroupKeyOf, TransferParts } from './transfer-parts.js';

/**
 * failure_ratio: failed / all matching transfers within a sliding `window`, per group, at or above `threshold`,
 * once the group had at least `min_total` transfers in the window (one failure out of two pages nobody).
 * Both streams feed it, and they are polled at different paces: the window is judged only up to where both
 * are read completely, or the ratio would count failures whose successes have not been fetched yet.
 */
export const failureRatioSchema = ruleSchema('failure_ratio', {
  group_by: z.array(labelNameSchema).default([]),
  threshold: z.number().gt(0, 'threshold must be a ratio in (0, 1]').max(1, 'threshold must be a ratio in (0, 1]'),
  min_total: z.number().int().min(1).default(10),
  window: duration().refine((ms) => ms > 0, 'window must be greater than 0'),
  for: duration().prefault('0'),
  keep_firing_for: duration().prefault('0'),
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
});
export type FailureRatioRule = z.output<typeof failureRatioSchema>;

const TEMPLATE_VARIABLES = [
  'count',
  'total',
  'ratio',
  'percent',
  'threshold',
  'threshold_percent',
  'min_total',
  'window',
  'window_ms',
  'window_start',
  'window_end',
  'timezone',
];
const DEFAULT_ANNOTATIONS = {
  summary: '{{percent}} of transfers failed ({{count}} of {{total}}) in {{window}}',
  // The window's times are in every message already (see error_burst's default).
  description: '{{count}} of {{total}} transfers failed in the last {{window}} (threshold {{threshold_percent}}, at least {{min_total}} transfers).',
};

const SUCCESS_RESOLUTION = 1000;

interface Group {
  labels: Labels;
  /** Successes count only: their times to the second (whole-second timestamps count exactly), 16 bytes a second. */
  successes: TimeCounts;
  /** Failures carry what a message shows. */
  failures: { time: number; sample: TransferSample }[];
}

function percent(ratio: number): string {
  return `${Math.round(ratio * 1000) / 10}%`;
}

export class FailureRatioEvaluator implements RuleEvaluator {
  private readonly groups = new Map<string, Group>();
  private readonly builder: AlertBuilder;
  private readonly sources: string[];

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;
  /** The engine's shared sample of the transfer being observed (see TransferParts). */
  private readonly parts: TransferParts;

  constructor(
    private readonly rule: ZonedRule<FailureRatioRule>,
    ctx: EvaluatorContext,
  ) {
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    this.parts = ctx.parts;
    this.keyOf = this.parts.groupKeyOf(rule.group_by);
    this.sources = sourcesToJudge(rule, ctx);
  }

  observe(t: Transfer): boolean {
    const key = this.keyOf(t);
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { labels: groupLabels(t, this.rule.group_by), successes: new TimeCounts(SUCCESS_RESOLUTION), failures: [] }));
    if (t.result === 'success') group.successes.add(t.time);
    else {
      insertByTime(group.failures, {
        time: t.time,
        sample: this.parts.sample(t),
      });
    }
    return true;
  }

  evaluate(now: number, data: DataCompleteness): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const span = completeSpan(this.sources, data, ['success', 'error']);
    // Prune by the clock, not by the data: what left the window can never count again.
    for (const [key, group] of this.groups) {
      group.successes.dropUpTo(now - this.rule.window);
      dropUpTo(group.failures, now - this.rule.window);
      if (group.successes.size === 0 && group.failures.length === 0) this.groups.delete(key);
    }
    if (!span) return { rule: this.rule.name, alerts };
    const end = Math.min(now, span.until);
    const start = end - this.rule.window;
    const tz = this.rule.timezone;
    for (const group of this.groups.values()) {
      const failures = entriesIn(group.failures, start, end);
      const total = failures.length + group.successes.countIn(start, end);
      if (total < this.rule.min_total || failures.length === 0) continue;
      const ratio = failures.length / total;
      if (ratio < this.rule.threshold) continue;
      alerts.push(
        this.builder.build({
          groupLabels: group.labels,
          values: {
            count: failures.length,
            total,
            ratio: Math.round(ratio * 10_000) / 10_000,
            threshold: this.rule.threshold,
            min_total: this.rule.min_total,
            window_ms: this.rule.window,
            window: formatDuration(this.rule.window),
            window_end_ms: end,
          },
          display: {
            percent: percent(ratio),
            threshold_percent: percent(this.rule.threshold),
            window_start: formatTime(start, tz),
            window_end: formatTime(end, tz),
            timezone: tz,
          },
          samples: latestSamples(failures),
        }),
      );
    }
    return { rule: this.rule.name, alerts };
  }

  historyNeeded(): number {
    return this.rule.window;
  }

  nextWakeup(): number | undefined {
    return undefined;
  }
}

export const failureRatioRuleType = defineRuleType<FailureRatioRule>({
  type: 'failure_ratio',
  schema: failureRatioSchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new FailureRatioEvaluator(withDisplayZone(rule, ctx), ctx),
});
