import type { Alert } from '../../alerts/alert.js';
import { TransferWatchError } from '../../util/errors.js';
import { matchesAll, parseMatchers, type Matcher } from '../matcher.js';
import type { InhibitRuleConfig } from '../dispatch/route-schema.js';

/** Name of the built-in alert raised when a source has not been polled successfully for `stale_after`. */
export const SOURCE_DOWN_ALERTNAME = 'TransferWatchSourceDown';

/**
 * Whether an alert comes from a `missing_file` rule. Preferred mark: `values.rule_type` (a label would
 * change the alert's identity and show up in every message); a `rule_type` label is accepted too. Until
 * every producer sets it, the values only missing_file sets (`deadline_ms` with `min_count`) identify it.
 */
export function isMissingFileAlert(alert: Alert): boolean {
  if (alert.values.rule_type !== undefined) return alert.values.rule_type === 'missing_file';
  if (alert.labels.rule_type !== undefined) return alert.labels.rule_type === 'missing_file';
  return typeof alert.values.deadline_ms === 'number' && alert.values.min_count !== undefined;
}

interface CompiledRule {
  source: (alert: Alert) => boolean;
  target: (alert: Alert) => boolean;
  equal: readonly string[];
}

/**
 * Alertmanager's inhibition: a firing alert that matches a rule's `source_matchers` mutes every alert that
 * matches its `target_matchers` and has the same values (absent = "") for the `equal` labels.
 * Built in: `TransferWatchSourceDown{source=X}` inhibits the `missing_file` alerts of source X, since a
 * file cannot be called missing while its source cannot be read.
 */
export class Inhibitor {
  private readonly rules: CompiledRule[];

  constructor(configs: readonly InhibitRuleConfig[]) {
    this.rules = configs.map((rule, i) => ({
      source: predicate(rule.source_matchers, `inhibit_rules[${i}].source_matchers`),
      target: predicate(rule.target_matchers, `inhibit_rules[${i}].target_matchers`),
      equal: rule.equal,
    }));
    this.rules.push({
      source: (a) => a.labels.alertname === SOURCE_DOWN_ALERTNAME,
      target: isMissingFileAlert,
      equal: ['source'],
    });
  }

  /** Fingerprints of the firing alerts (among `firing`) that inhibit `alert`; empty when none does. */
  inhibitedBy(alert: Alert, firing: readonly Alert[]): string[] {
    const by = new Set<string>();
    for (const rule of this.rules) {
      if (!rule.target(alert)) continue;
      for (const source of firing) {
        if (source.state !== 'firing' || source.fingerprint === alert.fingerprint) continue;
        if (!rule.source(source)) continue;
        if (rule.equal.every((name) => (source.labels[name] ?? '') === (alert.labels[name] ?? ''))) by.add(source.fingerprint);
      }
    }
    return [...by].sort();
  }
}

function predicate(texts: readonly string[], where: string): (alert: Alert) => boolean {
  const matchers: Matcher[] = [];
  for (const text of texts) {
    try {
      matchers.push(...parseMatchers(text));
    } catch (err) {
      throw new TransferWatchError('inhibit_rule_invalid', `${where}: ${(err as Error).message}`);
    }
  }
  return (alert) => matchesAll(matchers, alert.labels);
}
