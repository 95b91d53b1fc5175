import type { RuleDefinition } from './registry.js';

/** One line of the ledger a configured rule judges: its rule, its key (the `for_each` label and value, or none). */
export interface LedgerLine {
  rule: string;
  key: Record<string, string>;
  timezone: string;
  /** The `for_each` label of the rule's keys, when it has one. */
  keyLabel: string | undefined;
  objective: number | undefined;
}

/**
 * Every rule and key the ledger judges under the rules configured now (contract section 11): a `missing_file` rule's
 * `for_each` values, or its one key-less line. Known before any deadline of a period has come, so a month's grid on its
 * first day (and a rule added mid-month) lists its lines with their days "not due yet" instead of nothing.
 */
export function ledgerLines(rules: readonly RuleDefinition[]): LedgerLine[] {
  return rules.flatMap((r) => {
    if (r.type !== 'missing_file' || !('window' in r)) return [];
    const each = r.for_each;
    const objective = r.sla?.objective;
    const common = { rule: r.name, timezone: r.timezone, keyLabel: each?.label, objective };
    return each ? [...new Set(each.values)].map((v) => ({ ...common, key: { [each.label]: v } })) : [{ ...common, key: {} }];
  });
}
