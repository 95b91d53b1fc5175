import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AlertCandidate, RuleEvaluation } from '../../src/alerts/alert-candidate.js';
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

  it('hands on the evaluation it handed on last while a rule reports the same alerts, and a new one when a figure or an alert changes', () => {
    const clock = new ManualClock(T0);
    const engine = new RuleEngine(rulesFrom(RULES), { clock, logger: silentLogger(), sources: ['prod'] });
    const burst = (m: number) => {
      clock.set(T0 + m * MIN);
      return engine.evaluate(T0 + m * MIN, completeUntil(T0 + m * MIN)).find((e) => e.rule === 'Burst');
    };
    for (const m of [0, 1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK1' }));
    const firing = burst(3);
    // A failure of another group, which stays below the threshold: the rule is asked again, for the same alerts.
    engine.observe(transfer({ time: T0 + 3 * MIN, code: 36, user: 'BANK2' }));
    expect(burst(4)).toBe(firing);
    // One more failure in the firing group: its count is 4 now.
    engine.observe(transfer({ time: T0 + 4 * MIN, code: 36, user: 'BANK1' }));
    const counted = burst(5);
    expect(counted).not.toBe(firing);
    expect(counted?.alerts.map((a) => a.values['count'])).toEqual([4]);
    // BANK2 reaches the threshold: a second alert.
    for (let i = 0; i < 2; i++) engine.observe(transfer({ time: T0 + 5 * MIN, code: 36, user: 'BANK2', id: `b2-${i}` }));
    expect(burst(6)?.alerts.map((a) => a.labels['user']).sort()).toEqual(['BANK1', 'BANK2']);
  });

  it('hands on the last evaluation only when what it resolves and clears is the same too', () => {
    const clock = new ManualClock(T0);
    const engine = new RuleEngine(rulesFrom(RULES), { clock, logger: silentLogger(), sources: ['prod'] });
    const candidate = (user: string): AlertCandidate => ({ labels: { alertname: 'Burst', user }, annotations: {}, values: {}, samples: [], for: 0, keepFiringFor: 0 });
    const [firing, low, lower] = [candidate('BANK1'), candidate('BANK2'), candidate('BANK3')];
    const outcomes: RuleEvaluation[] = [
      { rule: 'Burst', alerts: [firing], cleared: [low] },
      { rule: 'Burst', alerts: [firing], cleared: [lower] },
      { rule: 'Burst', alerts: [firing], cleared: [lower] },
      { rule: 'Burst', alerts: [firing], cleared: [lower], resolved: [low] },
    ];
    // The rule `Quiet` reports nothing; `Burst` reports the outcomes above, one an evaluation.
    vi.spyOn(ErrorBurstEvaluator.prototype, 'evaluate').mockImplementation(function (this: ErrorBurstEvaluator) {
      return (this as unknown as { rule: { name: string } }).rule.name === 'Burst' ? (outcomes.shift() as RuleEvaluation) : { rule: 'Quiet', alerts: [] };
    });
    vi.spyOn(ErrorBurstEvaluator.prototype, 'unchangedUntil').mockReturnValue(T0);
    const burst = () => engine.evaluate(T0, completeUntil(T0)).find((e) => e.rule === 'Burst');
    const first = burst();
    const second = burst();
    expect(second).not.toBe(first);
    expect(second?.cleared).toEqual([lower]);
    expect(burst()).toBe(second);
    expect(burst()?.resolved).toEqual([low]);
  });
});
