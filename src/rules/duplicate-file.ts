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
import { dropUpTo, firstAfter, insertByTime } from './sorted-times.js';
import { SingleCopies } from './single-copies.js';
import { latestSamples } from './transfer-samples.js';
import { withDisplayZone, type ZonedRule } from './rule-evaluator.js';
import type { GroupKeyOf, TransferParts } from './transfer-parts.js';

/**
 * duplicate_file: the same file (NOMEARQUIVO, and TAMARQUIVO with `same_size`) transferred successfully at least
 * `min_copies` times within a sliding `window`, per group (per user by default). A payment file sent twice is
 * paid twice. One alert per group and file; it resolves when the copies leave the window.
 */
export const duplicateFileSchema = ruleSchema('duplicate_file', {
  group_by: z.array(labelNameSchema).default(['user']),
  window: duration().refine((ms) => ms > 0, 'window must be greater than 0'),
  same_size: z.boolean().default(false),
  min_copies: z.number().int().min(2).default(2),
  for: duration().prefault('0'),
  keep_firing_for: duration().prefault('0'),
  /** The zone its times are shown in; default: `display_timezone`. */
  timezone: timeZone().optional(),
});
export type DuplicateFileRule = z.output<typeof duplicateFileSchema>;

const TEMPLATE_VARIABLES = ['copies', 'file', 'size', 'min_copies', 'first_at', 'last_at', 'window', 'window_ms', 'timezone'];
const DEFAULT_ANNOTATIONS = {
  summary: '{{file}} transferred {{copies}} times in {{window}}',
  description: '{{file}} was transferred successfully {{copies}} times between {{first_at}} and {{last_at}}.',
};
/** Files sent once are pruned in a sweep this often, not at every evaluation (there can be a day's worth). */
const SWEEP_EVERY = 60_000;

interface Copy {
  time: number;
  sample: TransferSample;
}

interface Group {
  labels: Labels;
  file: string;
  size: number;
  copies: Copy[];
}

export class DuplicateFileEvaluator implements RuleEvaluator {
  /** Files seen once in the window (nearly all of them), compactly. */
  private readonly singles = new SingleCopies();
  /** Files seen more than once, with a sample per copy. */
  private readonly groups = new Map<string, Group>();
  /** Keys of the groups holding at least `min_copies`: the only ones an evaluation must look at. */
  private readonly repeated = new Set<string>();
  private lastSweep = -Infinity;
  private readonly builder: AlertBuilder;
  readonly onlyResult = 'success';

  /** This rule's group key of a transfer, shared with the engine's other rules that group the same way. */
  private readonly keyOf: GroupKeyOf;

  constructor(
    private readonly rule: ZonedRule<DuplicateFileRule>,
    private readonly parts: TransferParts,
  ) {
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    this.keyOf = parts.groupKeyOf(rule.group_by);
  }

  observe(t: Transfer): boolean {
    if (t.result !== 'success') return false;
    const key = this.keyOf(t);
    const fileKey = this.rule.same_size ? `${key}\u0000${t.file}\u0000${t.size}` : `${key}\u0000${t.file}`;
    let group = this.groups.get(fileKey);
    if (!group) {
      const first = this.singles.take(fileKey);
      if (!first) {
        this.singles.put(fileKey, { time: t.time, user: t.user, instance: t.instance, message: t.message });
        return true;
      }
      const fileLabels: Labels = { ...groupLabels(t, this.rule.group_by), file: t.file };
      if (this.rule.same_size) fileLabels['size'] = String(t.size);
      // The first copy's sample, rebuilt: the same file (and size), a success (code 0), its own time, user, instance and message.
      const firstSample = { time: first.time, file: t.file, code: 0, message: first.message, user: first.user, instance: first.instance };
      this.groups.set(fileKey, (group = { labels: fileLabels, file: t.file, size: t.size, copies: [{ time: first.time, sample: firstSample }] }));
    }
    insertByTime(group.copies, {
      time: t.time,
      sample: this.parts.sample(t),
    });
    if (group.copies.length >= this.rule.min_copies) this.repeated.add(fileKey);
    return true;
  }

  evaluate(now: number): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const tz = this.rule.timezone;
    if (now - this.lastSweep >= SWEEP_EVERY) {
      this.lastSweep = now;
      this.singles.pruneUpTo(now - this.rule.window);
      for (const [key, group] of this.groups) {
        dropUpTo(group.copies, now - this.rule.window);
        if (group.copies.length === 0) this.groups.delete(key);
      }
    }
    for (const key of this.repeated) {
      const group = this.groups.get(key);
      if (group) dropUpTo(group.copies, now - this.rule.window);
      if (!group || group.copies.length < this.rule.min_copies) {
        this.repeated.delete(key);
        if (group?.copies.length === 0) this.groups.delete(key);
        continue;
      }
      const copies = group.copies.slice(0, firstAfter(group.copies, now));
      if (copies.length < this.rule.min_copies) continue;
      const first = copies[0] as Copy;
      const last = copies[copies.length - 1] as Copy;
      alerts.push(
        this.builder.build({
          groupLabels: group.labels,
          values: {
            copies: copies.length,
            file: group.file,
            size: group.size,
            min_copies: this.rule.min_copies,
            first_at_ms: first.time,
            last_at_ms: last.time,
            window_ms: this.rule.window,
            window: formatDuration(this.rule.window),
          },
          display: { first_at: formatTime(first.time, tz), last_at: formatTime(last.time, tz), timezone: tz },
          samples: latestSamples(copies),
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

export const duplicateFileRuleType = defineRuleType<DuplicateFileRule>({
  type: 'duplicate_file',
  schema: duplicateFileSchema,
  templateVariables: TEMPLATE_VARIABLES,
  create: (rule, ctx) => new DuplicateFileEvaluator(withDisplayZone(rule, ctx), ctx.parts),
});
