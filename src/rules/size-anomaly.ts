import { z } from 'zod';
import type { Labels, TransferSample } from '../alerts/alert.js';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { formatDuration } from '../base/duration.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import type { Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { formatTime } from '../util/format-time.js';
import { groupLabels } from './group-key.js';
import type { RuleEvaluator } from './rule-evaluator.js';
import { labelNameSchema, ruleSchema } from './rule-schema.js';
import { defineRuleType } from './rule-type.js';
import { dropUpTo, entriesIn, firstAfter, insertByTime } from './sorted-times.js';
import { latestSamples } from './transfer-samples.js';
import { withDisplayZone, type ZonedRule } from './rule-evaluator.js';
import type { GroupKeyOf, TransferParts } from './transfer-parts.js';

/**
 * size_anomaly: a successful transfer whose size (TAMARQUIVO) is zero, outside fixed bounds, or more than
 * `deviation.factor` times away from the median of the group's recent sizes (once there are
 * `deviation.min_samples` of them). One alert per group, active for `resolve_after` after the latest anomaly.
 */
export const sizeAnomalySchema = ruleSchema('size_anomaly', {
  group_by: z.array(labelNameSchema).default(['user']),
  zero_size: z.boolean().default(true),
  min_size: z.number().int().min(1).optional(),
  max_size: z.number().int().min(1).optional(),
  deviation: z
    .strictObject({
      factor: z.number().gt(1, 'factor must be greater than 1'),
      min_samples: z.number().int().min(1).default(5),
      /** How many recent sizes make the median. */
      samples: z.number().int().min(1).max(1000).default(20),
      /** How far back those sizes may be (and how much history a restart re-reads). */
      history: duration().prefault('7d'),
    })
    .optional(),
  resolve_after: duration().prefault('1h').refine((ms) => ms > 0, 'resolve_after must be greater than 0'),
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
}).superRefine((rule, ctx) => {
  if (!rule.zero_size && rule.min_size === undefined && rule.max_size === undefined && !rule.deviation) {
    ctx.addIssue({ code: 'custom', path: [], message: 'a size_anomaly rule needs zero_size, min_size, max_size or deviation' });
  }
  if (rule.min_size !== undefined && rule.max_size !== undefined && rule.max_size < rule.min_size) {
    ctx.addIssue({ code: 'custom', path: ['max_size'], message: 'max_size must be at least min_size' });
  }
});
export type SizeAnomalyRule = z.output<typeof sizeAnomalySchema>;

type Kind = 'zero' | 'below_min' | 'above_max' | 'unusual';

const TEMPLATE_VARIABLES = ['size', 'kind', 'median', 'file', 'anomalies', 'min_size', 'max_size', 'factor', 'at', 'resolve_after', 'timezone'];
const DEFAULT_ANNOTATIONS = {
  summary:
    '{{file}}: {{#if median}}size {{size}} bytes, usually {{median}}{{else}}size {{size}} bytes{{/if}} ({{kind}})',
  description: '{{anomalies}} transfer(s) of unusual size; the latest, {{file}} at {{at}}, had {{size}} bytes.',
};

interface Anomaly {
  time: number;
  kind: Kind;
  size: number;
  median: number | undefined;
  sample: TransferSample;
}

interface Group {
  labels: Labels;
  /** Recent successful sizes, sorted by time; at most `deviation.samples` newer than `deviation.history`. */
  sizes: { time: number; size: number }[];
  anomalies: Anomaly[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export class SizeAnomalyEvaluator implements RuleEvaluator {
  private readonly groups = new Map<string, Group>();
  private readonly builder: AlertBuilder;
  readonly onlyResult = 'success';

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;

  constructor(
    private readonly rule: ZonedRule<SizeAnomalyRule>,
    private readonly parts: TransferParts,
  ) {
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    this.keyOf = parts.groupKeyOf(rule.group_by);
  }

  observe(t: Transfer): boolean {
    if (t.result !== 'success') return false;
    const key = this.keyOf(t);
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { labels: groupLabels(t, this.rule.group_by), sizes: [], anomalies: [] }));
    const dev = this.rule.deviation;
    let usual: number | undefined;
    if (dev) {
      // The usual size is judged from what came before this transfer (in occurrence time).
      const before = group.sizes.slice(0, firstAfter(group.sizes, t.time - 1)).filter((s) => s.time > t.time - dev.history);
      const recent = before.slice(-dev.samples).map((s) => s.size);
      if (recent.length >= dev.min_samples) usual = median(recent);
      insertByTime(group.sizes, { time: t.time, size: t.size });
      if (group.sizes.length > dev.samples * 2) group.sizes.splice(0, group.sizes.length - dev.samples * 2);
    }
    const kind = this.classify(t.size, usual);
    if (kind) {
      insertByTime(group.anomalies, {
        time: t.time,
        kind,
        size: t.size,
        median: usual,
        sample: this.parts.sample(t),
      });
    }
    return dev !== undefined || kind !== undefined;
  }

  private classify(size: number, usual: number | undefined): Kind | undefined {
    const r = this.rule;
    if (r.zero_size && size === 0) return 'zero';
    if (r.min_size !== undefined && size < r.min_size) return 'below_min';
    if (r.max_size !== undefined && size > r.max_size) return 'above_max';
    if (r.deviation && usual !== undefined && usual > 0 && (size > usual * r.deviation.factor || size < usual / r.deviation.factor)) return 'unusual';
    return undefined;
  }

  evaluate(now: number): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const tz = this.rule.timezone;
    const history = this.rule.deviation?.history ?? 0;
    for (const [key, group] of this.groups) {
      dropUpTo(group.anomalies, now - this.rule.resolve_after);
      dropUpTo(group.sizes, now - history);
      if (group.anomalies.length === 0 && group.sizes.length === 0) {
        this.groups.delete(key);
        continue;
      }
      const active = entriesIn(group.anomalies, now - this.rule.resolve_after, now);
      const latest = active[active.length - 1];
      if (!latest) continue;
      const values: Record<string, number | string> = {
        size: latest.size,
        kind: latest.kind,
        file: latest.sample.file,
        anomalies: active.length,
        at_ms: latest.time,
        resolve_after: formatDuration(this.rule.resolve_after),
      };
      if (latest.median !== undefined) values['median'] = latest.median;
      if (this.rule.min_size !== undefined) values['min_size'] = this.rule.min_size;
      if (this.rule.max_size !== undefined) values['max_size'] = this.rule.max_size;
      if (this.rule.deviation) values['factor'] = this.rule.deviation.factor;
      alerts.push(
        this.builder.build({
          groupLabels: group.labels,
          values,
          display: { at: formatTime(latest.time, tz), timezone: tz },
          samples: latestSamples(active),
        }),
      );
    }
    return { rule: this.rule.name, alerts };
  }

  historyNeeded(): number {
    return Math.max(this.rule.resolve_after, this.rule.deviation?.history ?? 0);
  }

  nextWakeup(): number | undefined {
    return undefined;
  }
}

export const sizeAnomalyRuleType = defineRuleType<SizeAnomalyRule>({
  type: 'size_anomaly',
  schema: sizeAnomalySchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new SizeAnomalyEvaluator(withDisplayZone(rule, ctx), ctx.parts),
});
