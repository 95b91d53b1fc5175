import { describe, expect, it } from 'vitest';
import { problemsOf, ruleHarness } from './rule-harness.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

const STUCK = `
rules:
  - name: PartnerStuck
    type: stuck_partner
    failing_for: 30m
    min_failures: 3
    forget_after: 6h
    severity: critical
`;

describe('stuck_partner', () => {
  it('fires when failures with no success in between span failing_for; a streak a bit shorter does not', () => {
    const { engine, step, firing } = ruleHarness(STUCK, T0);
    engine.observe(transfer({ time: T0, code: 0, user: 'BANK1' }));
    for (const m of [10, 20, 39]) engine.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK1' })); // 29m: almost
    for (const m of [10, 25, 40]) engine.observe(transfer({ time: T0 + m * MIN, code: 21, user: 'BANK2', message: 'timeout' }));
    step(T0 + 45 * MIN);
    const [alert, ...rest] = firing();
    expect(rest).toEqual([]);
    expect(alert?.labels).toEqual({ alertname: 'PartnerStuck', severity: 'critical', user: 'BANK2' });
    expect(alert?.values).toMatchObject({ count: 3, since_ms: T0 + 10 * MIN, last_failure_ms: T0 + 40 * MIN });
    expect(alert?.annotations['summary']).toBe('3 failed transfers in a row since 2026-11-20 10:10:00 UTC, no success in between');
    expect(alert?.samples[0]).toMatchObject({ message: 'timeout' });
  });

  it('a success in between breaks the streak; a success after it resolves the alert', () => {
    const { engine, step, firing } = ruleHarness(STUCK, T0);
    for (const m of [0, 10]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    engine.observe(transfer({ time: T0 + 15 * MIN, code: 0 }));
    for (const m of [20, 40]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    step(T0 + 45 * MIN);
    expect(firing()).toEqual([]);
    engine.observe(transfer({ time: T0 + 60 * MIN, code: 36 }));
    step(T0 + 61 * MIN);
    expect(firing()).toHaveLength(1);
    engine.observe(transfer({ time: T0 + 70 * MIN, code: 0 }));
    expect(step(T0 + 71 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('waits for the successes stream: a success not read yet may still break the streak', () => {
    const { engine, step, firing } = ruleHarness(STUCK, T0);
    for (const m of [0, 15, 30]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    step(T0 + 31 * MIN, T0 + 29 * MIN);
    expect(firing()).toEqual([]);
    step(T0 + 31 * MIN);
    expect(firing()).toHaveLength(1);
    // A partner that stops trying is forgotten after forget_after (bounded state).
    expect(step(T0 + 30 * MIN + 6 * HOUR).map((c) => c.to)).toEqual(['resolved']);
  });

  it('check: forget_after not longer than failing_for is reported at its position', () => {
    expect(problemsOf(STUCK.replace('forget_after: 6h', 'forget_after: 10m'))).toEqual([
      '7:19: forget_after: forget_after must be longer than failing_for',
    ]);
  });
});
