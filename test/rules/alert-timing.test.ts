import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { completeUntil, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

/** The rule types with `for` / `keep_firing_for`, each made to fire once; and two that have neither. */
const RULES = `
rules:
  - { name: Burst, type: error_burst, threshold: 2, window: 10m, for: 1m, keep_firing_for: 2m }
  - { name: Ratio, type: failure_ratio, threshold: 0.5, min_total: 2, window: 10m, for: 3m, keep_firing_for: 4m }
  - { name: Twice, type: duplicate_file, window: 10m, for: 5m, keep_firing_for: 6m }
  - { name: Quiet, type: volume, match: { event: [deletion] }, window: 10m, min: 1, for: 7m, keep_firing_for: 8m }
  - { name: Code, type: error_code, codes: [36] }
  - { name: Size, type: size_anomaly, zero_size: true }
`;

describe("a rule's for and keep_firing_for", () => {
  it('hold for every alert it builds; types without them build alerts that fire at once and resolve at once', () => {
    const engine = new RuleEngine(rulesFrom(RULES), { clock: new ManualClock(T0), logger: silentLogger(), sources: ['prod'] });
    for (const m of [1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    for (const m of [1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 0, size: 0 }));
    const now = T0 + 3 * MIN;
    const timing = Object.fromEntries(
      engine.evaluate(now, completeUntil(now)).flatMap((e) => e.alerts.map((a) => [e.rule, [a.for, a.keepFiringFor]])),
    );
    expect(timing).toEqual({
      Burst: [1 * MIN, 2 * MIN],
      Ratio: [3 * MIN, 4 * MIN],
      Twice: [5 * MIN, 6 * MIN],
      Quiet: [7 * MIN, 8 * MIN],
      Code: [0, 0],
      Size: [0, 0],
    });
  });
});
