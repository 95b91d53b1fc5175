import { describe, expect, it } from 'vitest';
import { muteTimeIntervalSchema } from '../../../src/notify/dispatch/route-schema.js';
import { TimeIntervalError, TimeIntervals } from '../../../src/notify/mute/time-intervals.js';

function intervals(...defs: unknown[]) {
  return new TimeIntervals(defs.map((d) => muteTimeIntervalSchema.parse(d)));
}

describe('time intervals', () => {
  const maintenance = intervals({
    name: 'night-maintenance',
    time_intervals: [{ weekdays: ['monday:friday'], times: [{ start_time: '22:00', end_time: '24:00' }], location: 'America/Sao_Paulo' }],
  });

  it('evaluates weekdays and times in the interval’s zone', () => {
    // Tuesday 2024-03-05 22:30 in São Paulo (UTC-3) is Wednesday 01:30 UTC.
    expect(maintenance.contains('night-maintenance', Date.parse('2024-03-06T01:30:00Z'))).toBe(true);
    // 21:59 local: not yet.
    expect(maintenance.contains('night-maintenance', Date.parse('2024-03-06T00:59:00Z'))).toBe(false);
    // 22:30 UTC on Tuesday is 19:30 local: outside.
    expect(maintenance.contains('night-maintenance', Date.parse('2024-03-05T22:30:00Z'))).toBe(false);
    // Saturday 2024-03-09 23:00 local (Sunday 02:00 UTC): weekday excluded.
    expect(maintenance.contains('night-maintenance', Date.parse('2024-03-10T02:00:00Z'))).toBe(false);
    expect(maintenance.contains('unknown', Date.parse('2024-03-06T01:30:00Z'))).toBe(false);
  });

  it('handles days of month (negative = from the end), months and years', () => {
    const ti = intervals({
      name: 'month-end',
      time_intervals: [{ days_of_month: ['-1'], months: ['february', '12'], years: ['2024:2025'] }],
    });
    expect(ti.contains('month-end', Date.parse('2024-02-29T12:00:00Z'))).toBe(true);
    expect(ti.contains('month-end', Date.parse('2024-02-28T12:00:00Z'))).toBe(false);
    expect(ti.contains('month-end', Date.parse('2025-12-31T00:00:00Z'))).toBe(true);
    expect(ti.contains('month-end', Date.parse('2024-03-31T12:00:00Z'))).toBe(false);
    expect(ti.contains('month-end', Date.parse('2026-02-28T12:00:00Z'))).toBe(false);
  });

  it('rejects unreadable fields', () => {
    expect(() => intervals({ name: 'x', time_intervals: [{ weekdays: ['funday'] }] })).toThrow(TimeIntervalError);
    expect(() => intervals({ name: 'x', time_intervals: [{ times: [{ start_time: '10:00', end_time: '09:00' }] }] })).toThrow(TimeIntervalError);
    expect(() => intervals({ name: 'x', time_intervals: [{ months: ['13'] }] })).toThrow(TimeIntervalError);
  });
});
