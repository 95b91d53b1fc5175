import { describe, expect, it } from 'vitest';
import { problemsOf, ruleHarness } from './rule-harness.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

const DUP = `
rules:
  - name: DuplicatePayment
    type: duplicate_file
    match: { event: [transmission], file: ["PAG_*.REM"] }
    window: 1h
    severity: critical
`;

describe('duplicate_file', () => {
  it('fires when the same file is sent successfully twice in the window by one user, with both copies', () => {
    const { engine, step, firing } = ruleHarness(DUP, T0);
    const sent = (m: number, over: Parameters<typeof transfer>[0] extends infer P ? Partial<P> : never = {}) =>
      engine.observe(transfer({ time: T0 + m * MIN, eventCode: 5, file: '/out/BANK1/PAG_001.REM', user: 'BANK1', ...over }));
    sent(5);
    sent(6, { code: 12 }); // a failed attempt is no copy
    sent(7, { user: 'BANK2' }); // another user's file of the same name is no copy
    step(T0 + 10 * MIN);
    expect(firing()).toEqual([]);
    sent(30);
    step(T0 + 31 * MIN);
    const [alert, ...rest] = firing();
    expect(rest).toEqual([]);
    expect(alert?.labels).toEqual({ alertname: 'DuplicatePayment', severity: 'critical', user: 'BANK1', file: '/out/BANK1/PAG_001.REM' });
    expect(alert?.values).toMatchObject({ copies: 2, file: '/out/BANK1/PAG_001.REM' });
    expect(alert?.samples.map((s) => s.time)).toEqual([T0 + 30 * MIN, T0 + 5 * MIN]);
    expect(alert?.annotations['summary']).toBe('/out/BANK1/PAG_001.REM transferred 2 times in 1h');
  });

  it('almost fires: the second copy just outside the window; resolves when a copy leaves the window', () => {
    const { engine, step, firing } = ruleHarness(DUP, T0);
    engine.observe(transfer({ time: T0, eventCode: 5, file: 'PAG_002.REM' }));
    engine.observe(transfer({ time: T0 + HOUR, eventCode: 5, file: 'PAG_002.REM' }));
    step(T0 + HOUR);
    expect(firing()).toEqual([]);
    engine.observe(transfer({ time: T0 + HOUR + MIN, eventCode: 5, file: 'PAG_002.REM' }));
    step(T0 + HOUR + 2 * MIN);
    expect(firing()).toHaveLength(1);
    expect(step(T0 + 2 * HOUR).map((c) => c.to)).toEqual(['resolved']);
  });

  it('same_size: a resend with another size is a correction, not a duplicate', () => {
    const { engine, step, firing } = ruleHarness(DUP.replace('window: 1h', 'window: 1h\n    same_size: true'), T0);
    engine.observe(transfer({ time: T0, eventCode: 5, file: 'PAG_003.REM', size: 100 }));
    engine.observe(transfer({ time: T0 + MIN, eventCode: 5, file: 'PAG_003.REM', size: 120 }));
    step(T0 + 2 * MIN);
    expect(firing()).toEqual([]);
    engine.observe(transfer({ time: T0 + 3 * MIN, eventCode: 5, file: 'PAG_003.REM', size: 120 }));
    step(T0 + 4 * MIN);
    expect(firing().map((a) => a.labels['size'])).toEqual(['120']);
  });

  it('check: min_copies below 2 is reported at its position', () => {
    expect(problemsOf(DUP.replace('window: 1h', 'window: 1h\n    min_copies: 1'))).toEqual([
      '7:17: min_copies: must be at least 2',
    ]);
  });
});
