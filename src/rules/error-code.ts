import { z } from 'zod';
import type { Labels, TransferSample } from '../alerts/alert.js';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { formatDuration } from '../base/duration.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import type { Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { completeSpan, relevantSources } from './complete-span.js';
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
 * error_code: a failure whose RESULTADO is one of `codes`, or (with `new_codes`) a code not seen for that group
 * within the `learn_for` before it, fires at once — one alert per group, carrying the latest MENSAGEM. It
 * resolves when no such failure happened for `resolve_after`. A code is called new only when the data read
 * without gaps covers `learn_for` before it: a first start does not call every code new.
 */
export const errorCodeSchema = ruleSchema('error_code', {
  group_by: z.array(labelNameSchema).default(['user']),
  codes: z.array(z.number().int().refine((c) => c !== 0, 'code 0 is success, not an error')).min(1).optional(),
  new_codes: z.boolean().default(false),
  learn_for: duration().prefault('1d').refine((ms) => ms > 0, 'learn_for must be greater than 0'),
  resolve_after: duration().prefault('1h').refine((ms) => ms > 0, 'resolve_after must be greater than 0'),
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
}).superRefine((rule, ctx) => {
  if (!rule.codes && !rule.new_codes) {
    ctx.addIssue({ code: 'custom', path: [], message: 'an error_code rule needs codes or new_codes: true' });
  }
});
export type ErrorCodeRule = z.output<typeof errorCodeSchema>;

const TEMPLATE_VARIABLES = ['code', 'message', 'file', 'reason', 'count', 'at', 'window', 'window_ms', 'timezone'];
const DEFAULT_ANNOTATIONS = {
  summary: '{{#if message}}Transfer failed with code {{code}}: {{message}}{{else}}Transfer failed with code {{code}}{{/if}}',
  description: '{{count}} failure(s) with {{#if reason}}{{reason}} {{/if}}codes in {{window}}; the latest, {{file}} at {{at}}, failed with code {{code}}.',
};

interface Hit {
  time: number;
  listed: boolean;
  /** New for its group when observed (judged again against the data's span at evaluation). */
  isNew: boolean;
  sample: TransferSample;
}

interface Group {
  labels: Labels;
  hits: Hit[];
  /** new_codes: per code, the first and last time it was seen (within `learn_for`). */
  seen: Map<number, { first: number; last: number }>;
}

export class ErrorCodeEvaluator implements RuleEvaluator {
  private readonly groups = new Map<string, Group>();
  private readonly builder: AlertBuilder;
  private readonly codes: Set<number>;
  private readonly sources: string[];
  readonly onlyResult = 'error';

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;
  /** The engine's shared sample of the transfer being observed (see TransferParts). */
  private readonly parts: TransferParts;

  constructor(
    private readonly rule: ZonedRule<ErrorCodeRule>,
    ctx: EvaluatorContext,
  ) {
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    this.parts = ctx.parts;
    this.keyOf = this.parts.groupKeyOf(rule.group_by);
    this.codes = new Set(rule.codes ?? []);
    this.sources = relevantSources(rule.match, ctx.sources);
  }

  observe(t: Transfer): boolean {
    if (t.result !== 'error') return false;
    const listed = this.codes.has(t.code);
    if (!listed && !this.rule.new_codes) return false;
    const key = this.keyOf(t);
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { labels: groupLabels(t, this.rule.group_by), hits: [], seen: new Map() }));
    let isNew = false;
    if (this.rule.new_codes) {
      const seen = group.seen.get(t.code);
      // New: no sighting in [t - learn_for, t). First/last bound that for records arriving out of order.
      isNew = !seen || seen.first >= t.time || seen.last < t.time - this.rule.learn_for;
      if (!seen) group.seen.set(t.code, { first: t.time, last: t.time });
      else group.seen.set(t.code, { first: Math.min(seen.first, t.time), last: Math.max(seen.last, t.time) });
    }
    if (listed || isNew) {
      insertByTime(group.hits, {
        time: t.time,
        listed,
        isNew,
        sample: this.parts.sample(t),
      });
    }
    return true;
  }

  evaluate(now: number, data: DataCompleteness): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const tz = this.rule.timezone;
    const from = this.rule.new_codes ? completeSpan(this.sources, data, ['error'])?.from : undefined;
    for (const [key, group] of this.groups) {
      dropUpTo(group.hits, now - this.rule.resolve_after);
      for (const [code, seen] of group.seen) if (seen.last <= now - this.rule.learn_for) group.seen.delete(code);
      if (group.hits.length === 0 && group.seen.size === 0) {
        this.groups.delete(key);
        continue;
      }
      // A new code counts only where the history before it was read whole (else everything looks new).
      const active = entriesIn(group.hits, now - this.rule.resolve_after, now).filter(
        (h) => h.listed || (from !== undefined && h.time - this.rule.learn_for >= from),
      );
      const latest = active[active.length - 1];
      if (!latest) continue;
      alerts.push(
        this.builder.build({
          groupLabels: group.labels,
          values: {
            code: latest.sample.code,
            message: latest.sample.message,
            file: latest.sample.file,
            reason: latest.listed ? 'listed' : 'new',
            count: active.length,
            at_ms: latest.time,
            window_ms: this.rule.resolve_after,
            window: formatDuration(this.rule.resolve_after),
          },
          display: { at: formatTime(latest.time, tz), timezone: tz },
          samples: latestSamples(active),
        }),
      );
    }
    return { rule: this.rule.name, alerts };
  }

  historyNeeded(): number {
    // A new code still active after a restart needs its whole learning period re-read before it.
    return this.rule.new_codes ? this.rule.learn_for + this.rule.resolve_after : this.rule.resolve_after;
  }

  nextWakeup(): number | undefined {
    return undefined;
  }
}

export const errorCodeRuleType = defineRuleType<ErrorCodeRule>({
  type: 'error_code',
  schema: errorCodeSchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new ErrorCodeEvaluator(withDisplayZone(rule, ctx), ctx),
});
