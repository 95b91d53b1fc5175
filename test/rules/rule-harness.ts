import { AlertStore } from '../../src/alerts/alert-store.js';
import { parseRuleFile } from '../../src/rules/load-rules.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import type { DataCompleteness } from '../../src/rules/rule-evaluator.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';

/**
 * An engine and an alert store on a manual clock. `step(at)` evaluates with the data complete up to `at`
 * (or up to `completeUntil` when given) and from `completeFrom` (default: the beginning of time).
 */
export function ruleHarness(ruleYaml: string, start: number, opts: { sources?: string[]; completeFrom?: number } = {}) {
  const clock = new ManualClock(start);
  const logger = silentLogger();
  const engine = new RuleEngine(rulesFrom(ruleYaml), { clock, logger, sources: opts.sources ?? ['prod'] });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  const step = (at: number, completeUntil: number | undefined = at) => {
    clock.set(at);
    const data: DataCompleteness = {
      completeUntil: () => completeUntil,
      ...(opts.completeFrom !== undefined ? { completeFrom: () => opts.completeFrom } : {}),
    };
    return store.apply(engine.evaluate(at, data), at);
  };
  const firing = (name?: string) => store.alerts().filter((a) => a.state === 'firing' && (name === undefined || a.labels['alertname'] === name));
  return { clock, engine, store, step, firing };
}

/**
 * Problems of a rule file as `LINE:COL: message`, without the `rule "NAME": ` every problem of a rule starts
 * with (these tests have one rule; test/rules/load-rules.test.ts checks the name is there).
 */
export function problemsOf(yaml: string): string[] {
  return parseRuleFile('inline.yaml', yaml).problems.map((p) => `${p.line}:${p.col}: ${p.message.replace(/^rule "[^"]*": /, '')}`);
}
