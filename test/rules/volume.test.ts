import { describe, expect, it } from 'vitest';
import { problemsOf, ruleHarness } from './rule-harness.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

const DAY = 24 * HOUR;
const T0 = Date.parse('2026-11-20T10:00:00Z');

const FIXED = `
rules:
  - name: PartnerQuiet
    type: volume
    for_each: { label: user, values: [BANK1, BANK2, BANK3] }
    window: 1h
    min: 2
    severity: warning
`;

const COMPARE = `
rules:
  - name: VolumeDrop
    type: volume
    group_by: [user]
    window: 1h
    compare_to: { offsets: [1d, 7d], ratio_below: 0.3, ratio_above: 3, min_baseline: 4 }
`;

describe('volume', () => {
  it('fixed minimum with for_each: a key never seen is silent too; a key at the minimum is not', () => {
    const { engine, step, firing } = ruleHarness(FIXED, T0, { completeFrom: T0 });
    for (const m of [10, 20]) engine.observe(transfer({ time: T0 + m * MIN, user: 'BANK1' }));
    engine.observe(transfer({ time: T0 + 30 * MIN, user: 'BANK2' }));
    engine.observe(transfer({ time: T0 + 30 * MIN, user: 'OTHER' })); // not expected: ignored
    // A window that begins before the data read is not judged.
    step(T0 + 59 * MIN);
    expect(firing()).toEqual([]);
    step(T0 + HOUR);
    const quiet = firing().map((a) => [a.labels['user'], a.labels['direction'], a.values['transfers']]);
    expect(quiet.sort()).toEqual([
      ['BANK2', 'low', 1], // almost: one short of the minimum
      ['BANK3', 'low', 0], // never seen at all
    ]);
    expect(firing().find((a) => a.labels['user'] === 'BANK3')?.annotations['summary']).toBe('0 transfers in 1h (low volume: min 2)');
  });

  it('resolves once the key sends again, and never judges past the data read', () => {
    const { engine, step, firing } = ruleHarness(FIXED.replace('BANK1, BANK2, BANK3', 'BANK3'), T0, { completeFrom: T0 });
    step(T0 + HOUR);
    expect(firing()).toHaveLength(1);
    for (const m of [61, 62]) engine.observe(transfer({ time: T0 + m * MIN, user: 'BANK3' }));
    // The poller is stuck at 1h (outage): the window stays where the data ends, the verdict holds.
    step(T0 + 70 * MIN, T0 + HOUR);
    expect(firing()).toHaveLength(1);
    expect(step(T0 + 70 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('compare_to: fires below ratio_below of the mean of the same window on earlier days, not at it', () => {
    const now = T0 + 8 * DAY;
    const { engine, step, firing } = ruleHarness(COMPARE, now, { completeFrom: T0 });
    // Baseline: 10 transfers in the same hour 1 day and 7 days ago, for BANK1 and BANK2.
    for (const user of ['BANK1', 'BANK2']) {
      for (const back of [DAY, 7 * DAY]) for (let i = 0; i < 10; i++) engine.observe(transfer({ time: now - back - 50 * MIN + i * MIN, user }));
    }
    // Today: BANK1 sends 2 (< 0.3 × 10), BANK2 sends 3 (= 0.3 × 10: almost).
    for (let i = 0; i < 2; i++) engine.observe(transfer({ time: now - 30 * MIN + i * MIN, user: 'BANK1' }));
    for (let i = 0; i < 3; i++) engine.observe(transfer({ time: now - 30 * MIN + i * MIN, user: 'BANK2' }));
    step(now);
    const [alert, ...rest] = firing();
    expect(rest).toEqual([]);
    expect(alert?.labels).toEqual({ alertname: 'VolumeDrop', severity: 'warning', user: 'BANK1', direction: 'low' });
    expect(alert?.values).toMatchObject({ transfers: 2, baseline: 10, ratio: 0.2 });
    expect(alert?.annotations['summary']).toBe('2 transfers in 1h, usually 10 (low volume)');
  });

  it('compare_to: a storm of resends is high volume', () => {
    const now = T0 + 8 * DAY;
    const { engine, step, firing } = ruleHarness(COMPARE, now, { completeFrom: T0 });
    for (const back of [DAY, 7 * DAY]) for (let i = 0; i < 5; i++) engine.observe(transfer({ time: now - back - 10 * MIN - i, user: 'BANK1' }));
    for (let i = 0; i < 16; i++) engine.observe(transfer({ time: now - 10 * MIN - i, user: 'BANK1' }));
    step(now);
    expect(firing().map((a) => a.labels['direction'])).toEqual(['high']);
  });

  it('compare_to: no baseline is claimed from days the data does not cover', () => {
    const now = T0 + 8 * DAY;
    const { engine, step, firing } = ruleHarness(COMPARE, now, { completeFrom: now - 2 * DAY });
    for (let i = 0; i < 10; i++) engine.observe(transfer({ time: now - DAY - 30 * MIN + i, user: 'BANK1' }));
    step(now);
    // The 1d window is covered (baseline 10, today 0 → low); the 7d window is not and is left out.
    expect(firing().map((a) => a.values['baseline'])).toEqual([10]);
  });

  it('check: a rule without min, max or compare_to, and a bad offset, are reported at their positions', () => {
    expect(problemsOf(FIXED.replace('    min: 2\n', ''))).toEqual(['3:5: a volume rule needs min, max or compare_to']);
    expect(problemsOf(COMPARE.replace('offsets: [1d, 7d]', 'offsets: [1d, 7x]'))).toEqual([
      '7:33: compare_to.offsets.1: invalid duration "7x" (use e.g. 250ms, 30s, 5m, 1h, 1d)',
    ]);
  });
});
