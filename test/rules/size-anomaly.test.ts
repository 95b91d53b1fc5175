import { describe, expect, it } from 'vitest';
import { problemsOf, ruleHarness } from './rule-harness.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

const SIZE = `
rules:
  - name: OddSize
    type: size_anomaly
    match: { file: ["RET_*.RET"] }
    max_size: 1000000
    deviation: { factor: 10, min_samples: 3 }
    resolve_after: 1h
`;

describe('size_anomaly', () => {
  it('fires on an empty file at once, with the file and its size; resolves resolve_after later', () => {
    const { engine, step, firing } = ruleHarness(SIZE, T0);
    engine.observe(transfer({ time: T0, file: '/in/BANK1/RET_1.RET', size: 0 }));
    engine.observe(transfer({ time: T0, file: '/in/BANK2/RET_1.RET', size: 0, code: 12, user: 'BANK2' })); // failed: not judged
    step(T0 + MIN);
    const [alert, ...rest] = firing();
    expect(rest).toEqual([]);
    expect(alert?.labels).toEqual({ alertname: 'OddSize', severity: 'warning', user: 'BANK1' });
    expect(alert?.values).toMatchObject({ size: 0, kind: 'zero', file: '/in/BANK1/RET_1.RET' });
    expect(alert?.annotations['summary']).toBe('/in/BANK1/RET_1.RET: size 0 bytes (zero)');
    step(T0 + HOUR - 1);
    expect(firing()).toHaveLength(1);
    expect(step(T0 + HOUR).map((c) => c.to)).toEqual(['resolved']);
  });

  it('far from the median of recent sizes fires; just inside the factor does not; too few samples judge nothing', () => {
    const { engine, step, firing } = ruleHarness(SIZE, T0);
    engine.observe(transfer({ time: T0, size: 50, file: 'RET_0.RET' })); // first ever: no median yet, no claim
    for (const [m, size] of [[1, 1000], [2, 1200], [3, 900]] as const) engine.observe(transfer({ time: T0 + m * MIN, size, file: `RET_${m}.RET` }));
    engine.observe(transfer({ time: T0 + 4 * MIN, size: 101, file: 'RET_4.RET' })); // median 950 of the last four: 101 > 95, almost
    step(T0 + 5 * MIN);
    expect(firing()).toEqual([]);
    engine.observe(transfer({ time: T0 + 6 * MIN, size: 80, file: 'RET_SMALL.RET' })); // median of the last five is 900;
    step(T0 + 7 * MIN);
    expect(firing()[0]?.values).toMatchObject({ kind: 'unusual', size: 80, median: 900, file: 'RET_SMALL.RET' });
    expect(firing()[0]?.annotations['summary']).toBe('RET_SMALL.RET: size 80 bytes, usually 900 (unusual)');
  });

  it('above the fixed bound fires; the bound itself does not', () => {
    const { engine, step, firing } = ruleHarness(SIZE, T0);
    engine.observe(transfer({ time: T0, size: 1_000_000, file: 'RET_A.RET' }));
    step(T0 + MIN);
    expect(firing()).toEqual([]);
    engine.observe(transfer({ time: T0 + 2 * MIN, size: 1_000_001, file: 'RET_B.RET' }));
    step(T0 + 3 * MIN);
    expect(firing()[0]?.values['kind']).toBe('above_max');
  });

  it('check: a factor of 1 or less is reported at its position', () => {
    expect(problemsOf(SIZE.replace('factor: 10', 'factor: 1'))).toEqual(['7:26: deviation.factor: factor must be greater than 1']);
  });
});
