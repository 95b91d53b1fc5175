import { describe, expect, it } from 'vitest';
import { demoMorning } from '../../src/cli/demo.js';
import { ShiftedClock } from '../../src/util/clock.js';
import { formatTime } from '../../src/util/format-time.js';

describe('the simulated morning of the demo', () => {
  it('starts at 07:59:15 São Paulo on the latest business day, so the 08:00 deadline comes 45 s after start', () => {
    // Tuesday evening UTC → that Tuesday; Sunday and Saturday → the Friday before; Monday 02:00 UTC is still Sunday in São Paulo.
    expect(formatTime(demoMorning(Date.parse('2026-11-24T22:00:00Z')), 'America/Sao_Paulo')).toBe('2026-11-24 07:59:15 -03:00 (America/Sao_Paulo)');
    expect(formatTime(demoMorning(Date.parse('2026-11-22T12:00:00Z')), 'America/Sao_Paulo')).toBe('2026-11-20 07:59:15 -03:00 (America/Sao_Paulo)');
    expect(formatTime(demoMorning(Date.parse('2026-11-21T12:00:00Z')), 'America/Sao_Paulo')).toBe('2026-11-20 07:59:15 -03:00 (America/Sao_Paulo)');
    expect(formatTime(demoMorning(Date.parse('2026-11-23T02:00:00Z')), 'America/Sao_Paulo')).toBe('2026-11-20 07:59:15 -03:00 (America/Sao_Paulo)');
  });

  it('a shifted clock starts where it is told and moves at the pace of the wall clock', () => {
    let wall = 1_000;
    const clock = new ShiftedClock(50_000, () => wall);
    expect(clock.now()).toBe(50_000);
    wall += 1_234;
    expect(clock.now()).toBe(51_234);
  });
});
