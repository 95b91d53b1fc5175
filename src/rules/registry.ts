import { duplicateFileRuleType } from './duplicate-file.js';
import { errorBurstRuleType } from './error-burst.js';
import { errorCodeRuleType } from './error-code.js';
import { failureRatioRuleType } from './failure-ratio.js';
import { missingFileRuleType } from './missing-file.js';
import { sizeAnomalyRuleType } from './size-anomaly.js';
import { stuckPartnerRuleType } from './stuck-partner.js';
import { volumeRuleType } from './volume.js';
import type { EvaluatorContext, RuleEvaluator } from './rule-evaluator.js';
import type { RuleType } from './rule-type.js';
import { TransferWatchError } from '../util/errors.js';

/**
 * Every rule type, keyed by its `type`. Adding a type (failure_ratio, volume, duplicate_file, ...) is one
 * file exporting `defineRuleType(...)` and one line here.
 */
export const RULE_TYPES = [
  errorBurstRuleType,
  missingFileRuleType,
  failureRatioRuleType,
  volumeRuleType,
  duplicateFileRuleType,
  sizeAnomalyRuleType,
  errorCodeRuleType,
  stuckPartnerRuleType,
] as const;

type RuleOf<T> = T extends RuleType<infer R> ? R : never;
/** A validated rule of any registered type. */
export type RuleDefinition = RuleOf<(typeof RULE_TYPES)[number]>;

export function ruleTypeNames(): string[] {
  return RULE_TYPES.map((t) => t.type);
}

export function findRuleType(type: string): RuleType | undefined {
  return RULE_TYPES.find((t) => t.type === type);
}

export function createEvaluator(rule: RuleDefinition, ctx: EvaluatorContext): RuleEvaluator {
  for (const type of RULE_TYPES) {
    const evaluator = type.createIfOwn(rule, ctx);
    if (evaluator) return evaluator;
  }
  throw new TransferWatchError('unknown_rule_type', `unknown rule type "${rule.type}"`);
}

/** The `sla.objective` of a missing_file rule by name (the SLA report's objective), or undefined. */
export function slaObjective(rules: readonly RuleDefinition[], name: string): number | undefined {
  const rule = rules.find((r) => r.name === name);
  return rule && rule.type === 'missing_file' && 'sla' in rule ? rule.sla?.objective : undefined;
}
