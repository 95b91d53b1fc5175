import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorBurstEvaluator } from '../../src/rules/error-burst.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { completeUntil, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const RULES = `
rules:
  - name: Burst
    type: error_burst
    group_by: [user]
    threshold: 3
    window: 10m
    severity: critical
  - name: Quiet
    type: error_burst
    match: { user: [NOBODY] }
    threshold: 1
    window: 10m
    severity: warning
`;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('RuleEngine, a rule that observed nothing since its last evaluation', () => {
  it('is handed its last evaluation again until that evaluation can change, and asked again after an observation', () => {
    const evaluate = vi.spyOn(ErrorBurstEvaluator.prototype, 'evaluate');
    const clock = new ManualClock(T0);
    const engine = new RuleEngine(rulesFrom(RULES), { clock, logger: silentLogger(), sources: ['prod'] });
    for (const m of [0, 1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK1' }));
    const at = (m: number) => {
      clock.set(T0 + m * MIN);
      return engine.evaluate(T0 + m * MIN, completeUntil(T0 + m * MIN));
    };
    const first = at(3);
    expect(evaluate).toHaveBeenCalledTimes(2);
    expect(first.find((e) => e.rule === 'Burst')?.alerts).toHaveLength(1);
    // Nothing observed: the same evaluations, the rules not asked (the burst stands until T0 leaves the window).
    const second = at(4);
    expect(evaluate).toHaveBeenCalledTimes(2);
    expect(second[0]).toBe(first[0]);
    // An observation asks that rule again, and only it.
    engine.observe(transfer({ time: T0 + 4.5 * MIN, code: 36, user: 'BANK1' }));
    expect(at(5).find((e) => e.rule === 'Burst')?.alerts[0]?.values['count']).toBe(4);
    expect(evaluate).toHaveBeenCalledTimes(3);
    at(5.4);
    expect(evaluate).toHaveBeenCalledTimes(3);
    // Both are asked at their periodic visit of every group (every quarter window: T0+5.5m, T0+8m)...
    at(5.5);
    expect(evaluate).toHaveBeenCalledTimes(5);
    at(9.9);
    expect(evaluate).toHaveBeenCalledTimes(7);
    // ...and the burst alone when its first failure leaves the window (T0+10m): the count is 3 then.
    expect(at(10).find((e) => e.rule === 'Burst')?.alerts[0]?.values['count']).toBe(3);
    expect(evaluate).toHaveBeenCalledTimes(8);
  });
});
