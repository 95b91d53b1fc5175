import { parseRuleFile } from '../../src/rules/load-rules.js';
import type { RuleDefinition } from '../../src/rules/registry.js';

/** Parse rules from YAML text, failing loudly on any problem. */
export function rulesFrom(yaml: string): RuleDefinition[] {
  const { rules, problems } = parseRuleFile('inline.yaml', yaml);
  if (problems.length > 0) throw new Error(problems.map((p) => `${p.line}:${p.col}: ${p.message}`).join('\n'));
  return rules;
}
