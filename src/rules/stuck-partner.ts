import { z } from 'zod';
import type { Labels, TransferSample } from '../alerts/alert.js';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { formatDuration } from '../base/duration.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import type { Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { completeSpan, sourcesToJudge } from './complete-span.js';
import { formatTime } from '../util/format-time.js';
import { groupLabels } from './group-key.js';
import type { DataCompleteness, EvaluatorContext, RuleEvaluator } from './rule-evaluator.js';
import { labelNameSchema, ruleSchema } from './rule-schema.js';
import { defineRuleType } from './rule-type.js';
import { dropUpTo, entriesIn, insertByTime } from './sorted-times.js';
import { latestSamples } from './transfer-samples.js';
import { withDisplayZone, type ZonedRule } from './rule-evaluator.js';
import type { GroupKeyOf, TransferParts } from './transfer-parts.js';

/**
 * stuck_partner: a group (a partner user by default) whose matching transfers keep failing with no success in
 * between: at least `min_failures` failures whose first and last lie `failing_for` or more apart, and no
 * success after the first. Resolves on the first success after the streak began, or when the group has not
 * failed for `forget_after` (it stopped trying; the state must stay bounded). Judged only up to where both
 * streams are read, so a success not fetched yet does not look like a stuck partner.
 */
export const stuckPartnerSchema = ruleSchema('stuck_partner', {
  group_by: z.array(labelNameSchema).default(['user']),
  failing_for: duration().refine((ms) => ms > 0, 'failing_for must be greater than 0'),
  min_failures: z.number().int().min(2).default(3),
  forget_after: duration().prefault('1d'),
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
}).superRefine((rule, ctx) => {
  if (rule.forget_after <= rule.failing_for) {
    ctx.addIssue({ code: 'custom', path: ['forget_after'], message: 'forget_after must be longer than failing_for' });
  }
});
export type StuckPartnerRule = z.output<typeof stuckPartnerSchema>;

const TEMPLATE_VARIABLES = ['count', 'since', 'last_failure', 'last_success', 'failing_for', 'window', 'window_ms', 'timezone'];
const DEFAULT_ANNOTATIONS = {
  summary: '{{count}} failed transfers in a row since {{since}}, no success in between',
  description:
    'Every transfer since {{since}} failed ({{count}}, the latest at {{last_failure}}).{{#if last_success}} Last success: {{last_success}}.{{/if}}',
};

interface Failure {
  time: number;
  sample: TransferSample;
}

interface Group {
  labels: Labels;
  /** Latest success seen (occurrence time); failures at or before it are dropped. */
  lastSuccess: number | undefined;
  /** Failures after `lastSuccess`, sorted by time. */
  failures: Failure[];
}

export class StuckPartnerEvaluator implements RuleEvaluator {
  private readonly groups = new Map<string, Group>();
  private readonly builder: AlertBuilder;
  private readonly sources: string[];

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;
  /** The engine's shared sample of the transfer being observed (see TransferParts). */
  private readonly parts: TransferParts;

  constructor(
    private readonly rule: ZonedRule<StuckPartnerRule>,
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
    if (t.result === 'success') {
      // A success matters only if it ends a streak we hold (or one that may still come from the other stream).
      if (!group) this.groups.set(key, (group = { labels: groupLabels(t, this.rule.group_by), lastSuccess: t.time, failures: [] }));
      if (group.lastSuccess === undefined || t.time > group.lastSuccess) group.lastSuccess = t.time;
      dropUpTo(group.failures, group.lastSuccess);
      return true;
    }
    if (!group) this.groups.set(key, (group = { labels: groupLabels(t, this.rule.group_by), lastSuccess: undefined, failures: [] }));
    if (group.lastSuccess !== undefined && t.time <= group.lastSuccess) return false;
    insertByTime(group.failures, {
      time: t.time,
      sample: this.parts.sample(t),
    });
    return true;
  }

  evaluate(now: number, data: DataCompleteness): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const forgetBefore = now - this.rule.forget_after;
    for (const [key, group] of this.groups) {
      const last = group.failures[group.failures.length - 1];
      // Not failed for forget_after: it stopped trying, or recovered long ago. Drop the group (bounded state).
      if (!last || last.time <= forgetBefore) {
        if (group.lastSuccess === undefined || group.lastSuccess <= forgetBefore) this.groups.delete(key);
        else group.failures = [];
      }
    }
    const span = completeSpan(this.sources, data, ['success', 'error']);
    if (!span) return { rule: this.rule.name, alerts };
    const end = Math.min(now, span.until);
    const tz = this.rule.timezone;
    for (const group of this.groups.values()) {
      const streak = entriesIn(group.failures, -Infinity, end);
      const first = streak[0];
      const last = streak[streak.length - 1];
      if (!first || !last || streak.length < this.rule.min_failures) continue;
      if (last.time - first.time < this.rule.failing_for) continue;
      const values: Record<string, number | string> = {
        count: streak.length,
        since_ms: first.time,
        last_failure_ms: last.time,
        failing_for: formatDuration(this.rule.failing_for),
        // The window of the message: from the first failure of the streak to the data's end.
        window_ms: end - first.time,
        window_end_ms: end,
        window: formatDuration(end - first.time),
      };
      const display: Record<string, string> = {
        since: formatTime(first.time, tz),
        last_failure: formatTime(last.time, tz),
        timezone: tz,
      };
      if (group.lastSuccess !== undefined) {
        values['last_success_ms'] = group.lastSuccess;
        display['last_success'] = formatTime(group.lastSuccess, tz);
      }
      alerts.push(
        this.builder.build({
          groupLabels: group.labels,
          values,
          display,
          samples: latestSamples(streak),
        }),
      );
    }
    return { rule: this.rule.name, alerts };
  }

  historyNeeded(): number {
    return this.rule.forget_after;
  }

  nextWakeup(): number | undefined {
    return undefined;
  }
}

export const stuckPartnerRuleType = defineRuleType<StuckPartnerRule>({
  type: 'stuck_partner',
  schema: stuckPartnerSchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new StuckPartnerEvaluator(withDisplayZone(rule, ctx), ctx),
});
