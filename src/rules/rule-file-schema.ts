import { z } from 'zod';
import { RULE_TYPES } from './registry.js';

/**
 * The schema of a whole rule file (`rules: [...]`, each rule one of the registered types, told apart by
 * `type`). The loader validates rule by rule for better positions and messages; this schema is what
 * `schemas/rules.schema.json` is generated from, so editors complete and validate rule files. Built from
 * the registry, so a new rule type appears in it without further edits.
 */
export function ruleFileSchema() {
  // The registry types each schema as a plain ZodType; every one is built by ruleSchema(), an object with a
  // literal `type`, which is what a discriminated union needs.
  const options = RULE_TYPES.map((t) => t.schema) as unknown as [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]];
  return z.strictObject({ rules: z.array(z.discriminatedUnion('type', options)).default([]) });
}
