import { describe, expect, it } from 'vitest';
import { POSITION_PERIOD_MINUTES } from '../../src/simulator/scenarios.js';
import { MEASURE_FROM, MEASURE_TO, MINUTE, iso, names, runScenario } from './shipped-rules-noise.js';

describe('the shipped rules on the simulator: late-file (no noise, see shipped-rules-noise.ts)', () => {
  it('late-file: PositionFileLate exactly where no position file arrived in time; BANK2\'s late statement each business day', async () => {
    const { fired, arrivals } = await runScenario('late-file', MINUTE);
    expect(Object.keys(names(fired)).sort()).toEqual(['DailyStatementMissing', 'PositionFileLate']);
    // Truth from the records themselves: a deadline (every 10 minutes) with no arrival in the rule's 8-minute window
    // before it, whose alert was not already firing (the deadline before it missed too, with no file by its close).
    const WINDOW = 8 * MINUTE;
    const missed = (d: number): boolean => !arrivals.some((t) => t.time > d - WINDOW && t.time <= d);
    const lateBy = (d: number): boolean => arrivals.some((t) => t.time > d && t.time <= d + POSITION_PERIOD_MINUTES * MINUTE - WINDOW);
    const expectedLate: string[] = [];
    let firing = false;
    for (let d = MEASURE_FROM + POSITION_PERIOD_MINUTES * MINUTE; d <= MEASURE_TO - 2 * MINUTE; d += POSITION_PERIOD_MINUTES * MINUTE) {
      if (missed(d) && !firing) expectedLate.push(iso(d));
      firing = missed(d) && !lateBy(d);
    }
    const late = fired.filter((f) => f.alertname === 'PositionFileLate').map((f) => iso(f.firedAt));
    expect(late.filter((t) => Date.parse(t) <= MEASURE_TO - 2 * MINUTE)).toEqual(expectedLate);
    expect(expectedLate.length).toBeGreaterThan(200);

    // BANK2 only; for each business day but the calendar's 2026-11-02: the jeopardy warning at 07:30, then the alert at 08:00.
    const statements = fired.filter((f) => f.alertname === 'DailyStatementMissing');
    expect(new Set(statements.map((f) => f.labels['user']))).toEqual(new Set(['BANK2']));
    const days = ['2026-10-20', '2026-10-21', '2026-10-22', '2026-10-23', '2026-10-26', '2026-10-27', '2026-10-28', '2026-10-29', '2026-10-30', '2026-11-03'];
    expect(days).toHaveLength(10);
    const want = days.flatMap((d) => [`${d}T10:30:00.000Z jeopardy`, `${d}T11:00:00.000Z missing`]);
    expect(statements.map((f) => `${iso(f.firedAt)} ${f.labels['phase'] ?? 'missing'}`).sort()).toEqual(want);
  }, 120_000);
});
