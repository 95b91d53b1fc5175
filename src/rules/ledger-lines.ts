import type { RuleDefinition } from './registry.js';
import type { MatchSpec } from './rule-schema.js';

/** A rule of the ledger as configured now: the keys it judges (its `for_each` values, or its one key-less line). */
export interface LedgerRule {
  rule: string;
  timezone: string;
  /** The `for_each` label of the rule's keys, when it has one. */
  keyLabel: string | undefined;
  keys: Array<Record<string, string>>;
  objective: number | undefined;
  /**
   * The labels its `match` fixes to one value (one pattern without `*` or `?`), but its `for_each` label: whose the
   * rule is, when it watches one partner by `match` (the shape `discover` proposes for a one-partner flow).
   */
  selects: Record<string, string>;
}

/** One line of the ledger a configured rule judges: its rule, its key (the `for_each` label and value, or none). */
export interface LedgerLine {
  rule: string;
  key: Record<string, string>;
  timezone: string;
  /** See LedgerRule's `selects`. */
  selects: Record<string, string>;
}

/**
 * Every `missing_file` rule the ledger judges under the rules configured now (contract section 11), with its keys:
 * known before any deadline of a period has come (the metrics' series from the first scrape, the `/sla` grid of a
 * month's first day).
 */
export function ledgerRules(rules: readonly RuleDefinition[]): LedgerRule[] {
  return rules.flatMap((r) => {
    if (r.type !== 'missing_file' || !('window' in r)) return [];
    const each = r.for_each;
    return [
      {
        rule: r.name,
        timezone: r.timezone,
        keyLabel: each?.label,
        keys: each ? [...new Set(each.values)].map((v) => ({ [each.label]: v })) : [{}],
        objective: r.sla?.objective,
        selects: selectedLabels(r.match, each?.label),
      },
    ];
  });
}

/** The labels a `match` fixes to one literal value (one pattern, no glob character), but `except`. */
function selectedLabels(match: MatchSpec, except: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [label, patterns] of Object.entries(match)) {
    const only = patterns?.length === 1 ? patterns[0] : undefined;
    if (label !== except && only !== undefined && !/[*?]/.test(only)) out[label] = only;
  }
  return out;
}

/**
 * Every rule and key the ledger judges under the rules configured now, so a month's grid on its first day (and a rule
 * added mid-month) lists its lines with their days "not due yet" instead of nothing.
 */
export function ledgerLines(rules: readonly RuleDefinition[]): LedgerLine[] {
  return ledgerRules(rules).flatMap((r) => r.keys.map((key) => ({ rule: r.rule, key, timezone: r.timezone, selects: r.selects })));
}
