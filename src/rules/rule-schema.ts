import { z } from 'zod';
import { LABEL_NAMES } from '../source/transfer.js';
import { checkTemplate } from './template.js';

/**
 * The fields every rule has, whatever its `type`. Each rule type adds its own fields in its own file and
 * builds its schema with `ruleSchema()`, so unknown keys are errors per type.
 */
export const labelNameSchema = z.enum(LABEL_NAMES);

/** `match`: per label, a list of glob patterns (`*`, `?`); a label that is absent matches everything. */
export const matchSchema = z
  .strictObject(Object.fromEntries(LABEL_NAMES.map((n) => [n, z.array(z.string().min(1)).min(1).optional()])))
  .default({});
export type MatchSpec = Partial<Record<(typeof LABEL_NAMES)[number], string[]>>;

const ALERT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Labels the engine sets itself; a rule's `labels` may not override them. */
export const RESERVED_LABELS = ['alertname', 'severity'] as const;

export interface RuleBase {
  name: string;
  type: string;
  match: MatchSpec;
  severity: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const commonShape = {
  name: z.string().regex(ALERT_NAME, 'must be a valid alert name (letters, digits, "_"; not starting with a digit)'),
  match: matchSchema,
  severity: z.string().min(1).default('warning'),
  labels: z.record(z.string().regex(LABEL_KEY, 'must be a valid label name'), z.string()).default({}),
  annotations: z.record(z.string().regex(LABEL_KEY, 'must be a valid annotation name'), z.string()).default({}),
};

/** Variables every rule template can use. */
export const COMMON_TEMPLATE_VARIABLES = ['labels', 'alertname', 'severity'] as const;

/** A rule schema for `type`: the common fields plus `shape`, unknown keys rejected. */
export function ruleSchema<T extends string, S extends z.core.$ZodLooseShape>(type: T, shape: S) {
  return z.strictObject({ ...commonShape, type: z.literal(type), ...shape });
}

export interface RuleIssue {
  path: (string | number)[];
  message: string;
}

/** Checks zod cannot express per type: templates name only variables the type offers; reserved labels. */
export function checkRuleTemplates(
  rule: RuleBase,
  templateVariables: readonly string[],
  extraTemplates: Record<string, Record<string, string>> = {},
): RuleIssue[] {
  const variables = [...COMMON_TEMPLATE_VARIABLES, ...templateVariables];
  const issues: RuleIssue[] = [];
  const fields: Record<string, Record<string, string>> = { labels: rule.labels, annotations: rule.annotations, ...extraTemplates };
  for (const [field, templates] of Object.entries(fields)) {
    for (const [key, source] of Object.entries(templates)) {
      const problem = checkTemplate(source, variables);
      if (problem) issues.push({ path: [field, key], message: problem });
    }
  }
  for (const key of Object.keys(rule.labels)) {
    if ((RESERVED_LABELS as readonly string[]).includes(key)) {
      issues.push({ path: ['labels', key], message: `label "${key}" is set by the engine; use the rule's own field` });
    }
  }
  return issues;
}
