import type { z } from 'zod';
import type { EvaluatorContext, RuleEvaluator } from './rule-evaluator.js';
import type { RuleBase } from './rule-schema.js';

/**
 * A rule type: its schema (common fields + its own), the variables its templates may use, and the factory
 * of its evaluator. Adding a type is one file exporting `defineRuleType(...)` and one line in registry.ts.
 */
export interface RuleType<R extends RuleBase = RuleBase> {
  readonly type: string;
  readonly schema: z.ZodType<R>;
  readonly templateVariables: readonly string[];
  /** Template maps beyond `labels` and `annotations` that the loader must validate, by field name. */
  extraTemplates(rule: RuleBase): Record<string, Record<string, string>>;
  /** The evaluator for `rule` when it is of this type; undefined otherwise. */
  createIfOwn(rule: RuleBase, ctx: EvaluatorContext): RuleEvaluator | undefined;
}

export function defineRuleType<R extends RuleBase>(def: {
  type: R['type'];
  schema: z.ZodType<R>;
  templateVariables: readonly string[];
  extraTemplates?: (rule: R) => Record<string, Record<string, string>>;
  create(rule: R, ctx: EvaluatorContext): RuleEvaluator;
}): RuleType<R> {
  // The type name is the discriminator: a rule parsed by this schema carries it, so the guard is exact.
  const isOwn = (rule: RuleBase): rule is R => rule.type === def.type;
  return {
    type: def.type,
    schema: def.schema,
    templateVariables: def.templateVariables,
    extraTemplates: (rule) => (isOwn(rule) && def.extraTemplates ? def.extraTemplates(rule) : {}),
    createIfOwn: (rule, ctx) => (isOwn(rule) ? def.create(rule, ctx) : undefined),
  };
}
