import { describe, expect, it } from 'vitest';
import { problemsOf, ruleHarness } from './rule-harness.js';
import { MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

const RATIO = `
rules:
  - name: Ratio
    type: failure_ratio
    group_by: [user]
    threshold: 0.5
    min_total: 4
    window: 10m
    severity: critical
`;

describe('failure_ratio', () => {
  it('fires when failures / all transfers reach the threshold with enough volume, per group', () => {
    const { engine, step, firing } = ruleHarness(RATIO, T0);
    for (const m of [1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK1', message: 'auth failed' }));
    for (const m of [3, 4]) engine.observe(transfer({ time: T0 + m * MIN, code: 0, user: 'BANK1' }));
    // BANK2: 3 failures of 3 transfers, but below min_total: one failure out of two pages nobody.
    for (const m of [1, 2, 3]) engine.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK2' }));
    step(T0 + 5 * MIN);
    const [alert, ...rest] = firing();
    expect(rest).toEqual([]);
    expect(alert?.labels).toEqual({ alertname: 'Ratio', severity: 'critical', user: 'BANK1' });
    expect(alert?.values).toMatchObject({ count: 2, total: 4, ratio: 0.5, window_ms: 10 * MIN, rule_type: 'failure_ratio' });
    expect(alert?.annotations['summary']).toBe('50% of transfers failed (2 of 4) in 10m');
    expect(alert?.samples[0]).toMatchObject({ code: 36, message: 'auth failed' });
  });

  it('almost fires: just under the threshold stays quiet', () => {
    const { engine, step, firing } = ruleHarness(RATIO, T0);
    for (const m of [1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    for (const m of [3, 4, 5]) engine.observe(transfer({ time: T0 + m * MIN, code: 0 }));
    step(T0 + 6 * MIN);
    expect(firing()).toEqual([]);
  });

  it('resolves when successes bring the ratio down, and judges only what both streams have read', () => {
    const { engine, step, firing } = ruleHarness(RATIO, T0);
    for (const m of [1, 2, 3]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    engine.observe(transfer({ time: T0 + 4 * MIN, code: 0 }));
    // Successes read only up to 3m: the window ends there, 3 failures of 3 transfers is below min_total.
    step(T0 + 5 * MIN, T0 + 3 * MIN);
    expect(firing()).toEqual([]);
    step(T0 + 5 * MIN);
    expect(firing()).toHaveLength(1);
    for (const m of [6, 7, 8]) engine.observe(transfer({ time: T0 + m * MIN, code: 0 }));
    const changes = step(T0 + 9 * MIN);
    expect(changes.map((c) => c.to)).toEqual(['resolved']);
  });

  it('check: a threshold that is not a ratio is reported at its position', () => {
    expect(problemsOf(RATIO.replace('threshold: 0.5', 'threshold: 5'))).toEqual(['6:16: threshold: threshold must be a ratio in (0, 1]']);
  });
});
