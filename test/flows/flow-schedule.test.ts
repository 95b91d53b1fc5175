import { describe, expect, it } from 'vitest';
import { learnSchedule, proposeDeadline, type CalendarCandidate } from '../../src/flows/flow-schedule.js';
import type { FlowDay } from '../../src/flows/flow-summary.js';

const DAY = 86_400_000;
const ZONE = 'America/Sao_Paulo';
/** 2026-09-01 00:00 in São Paulo (UTC−3). */
const START = Date.parse('2026-09-01T03:00:00Z');
const DAYS = 70;
const UNTIL = START + DAYS * DAY;
/** Brazil's national holidays of the period that fall on a weekday. */
const HOLIDAYS = new Set(['2026-09-07', '2026-10-12', '2026-11-02', '2026-11-20']);
const BR: CalendarCandidate = {
  name: 'BR',
  excludes: (d) => d.weekday === 0 || d.weekday === 6 || HOLIDAYS.has(d.date),
  excludedWeekdays: [0, 6],
};
const options = { timezone: ZONE, since: START - 1, until: UNTIL, minOccurrences: 8, calendars: [BR] };

/** Days of a flow that arrives at `minutes(day)` (local minutes; several per day allowed) on the days `on` chooses. */
function flowDays(on: (date: string, weekday: number, i: number) => boolean, minutes: (i: number) => number[]): FlowDay[] {
  const days: FlowDay[] = [];
  for (let i = 0; i < DAYS; i++) {
    const local = new Date(START + i * DAY - 3 * 3_600_000);
    const date = local.toISOString().slice(0, 10);
    if (!on(date, local.getUTCDay(), i)) continue;
    const arrivals = minutes(i).map((m) => START + i * DAY + m * 60_000);
    days.push({ day: date, count: arrivals.length, arrivals });
  }
  return days;
}

/** A spread of arrivals around a mean, the same every run. */
function around(mean: number, i: number, spread = 20): number {
  return mean + ((i * 37) % (2 * spread + 1)) - spread;
}

describe('the schedule a flow keeps', () => {
  it('business days of the calendar whose holidays it skips, with a deadline after its usual arrival', () => {
    const days = flowDays((date, w) => w >= 1 && w <= 5 && !HOLIDAYS.has(date), (i) => [around(7 * 60, i)]);
    const found = learnSchedule(days, options);
    if (!found.recurring) throw new Error(found.detail);
    expect(found.schedule.kind).toBe('daily');
    expect(found.schedule.weekdays).toEqual([1, 2, 3, 4, 5]);
    expect(found.schedule.calendar).toBe('BR');
    // 7 September, 12 October and 2 November fall in the 70 days read; 20 November is after them.
    expect(found.schedule.calendarEvidence).toEqual({ holidays: 3, skipped: 3 });
    expect(found.schedule.missed).toBe(0);
    const [deadline] = found.schedule.deadlines;
    expect(deadline).toBeGreaterThanOrEqual(7 * 60 + 20);
    expect(deadline).toBeLessThanOrEqual(7 * 60 + 50);
  });

  it('a flow that comes on holidays too has weekdays and no calendar', () => {
    const found = learnSchedule(flowDays((_, w) => w >= 1 && w <= 5, (i) => [around(9 * 60, i)]), options);
    if (!found.recurring) throw new Error(found.detail);
    expect(found.schedule.calendar).toBeNull();
    expect(found.schedule.weekdays).toEqual([1, 2, 3, 4, 5]);
  });

  it('a file 3 h late once a month stays late and does not move the deadline', () => {
    const days = flowDays((date, w) => w >= 1 && w <= 5 && !HOLIDAYS.has(date), (i) => [around(7 * 60, i) + ([10, 31, 59].includes(i) ? 180 : 0)]);
    const found = learnSchedule(days, options);
    if (!found.recurring) throw new Error(found.detail);
    expect(found.schedule.deadlines[0]).toBeLessThanOrEqual(7 * 60 + 50);
    expect(found.schedule.late).toBe(3);
    expect(proposeDeadline([600, 601, 602, 603, 604, 605, 606, 607, 608, 790])).toBeLessThan(640);
    // The figures shown beside the deadline are those it was set from: the late days counted apart, not in its p95.
    const [arrival] = found.schedule.arrivals;
    expect(arrival?.p95).toBeLessThanOrEqual(found.schedule.deadlines[0] as number);
    expect(arrival?.max).toBeLessThanOrEqual(found.schedule.deadlines[0] as number);
    expect(arrival?.outliers).toBe(3);
    expect(arrival?.latest).toBeGreaterThanOrEqual(10 * 60 - 20);
  });

  it('weekly on its weekday, every day, and twice a day with two deadlines', () => {
    const weekly = learnSchedule(flowDays((_, w) => w === 3, (i) => [around(12 * 60, i)]), options);
    expect(weekly.recurring && weekly.schedule.kind === 'weekly' && weekly.schedule.weekdays).toEqual([3]);
    const daily = learnSchedule(flowDays(() => true, (i) => [around(10 * 60, i)]), options);
    expect(daily.recurring && daily.schedule.weekdays).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const twice = learnSchedule(flowDays((date, w) => w >= 1 && w <= 5 && !HOLIDAYS.has(date), (i) => [around(8 * 60, i), around(15 * 60, i)]), options);
    if (!twice.recurring) throw new Error(twice.detail);
    expect(twice.schedule.deadlines).toHaveLength(2);
    expect(twice.schedule.deadlines[0]).toBeLessThan(9 * 60);
    expect(twice.schedule.deadlines[1]).toBeGreaterThan(15 * 60);
    expect(twice.schedule.windowMinutes).toBeLessThanOrEqual((twice.schedule.deadlines[1] as number) - (twice.schedule.deadlines[0] as number));
  });

  it('never calls ad-hoc traffic, a month-end file over two months or a flow seen a few times recurring', () => {
    const adhoc = learnSchedule(flowDays((_, __, i) => (i * 7919) % 10 < 3, (i) => [(i * 389) % 1440]), options);
    expect(adhoc.recurring).toBe(false);
    const monthEnd = learnSchedule(flowDays((date) => ['2026-09-30', '2026-10-30'].includes(date), () => [18 * 60]), options);
    expect(monthEnd).toMatchObject({ recurring: false, reason: 'too_few_periods' });
    const fewWeeks = learnSchedule(flowDays((_, w, i) => w === 2 && i > 50, () => [600]), options);
    expect(fewWeeks).toMatchObject({ recurring: false, reason: 'too_few_periods' });
    const random = learnSchedule(flowDays(() => true, (i) => Array.from({ length: 1 + (i % 4) }, (_, k) => (i * 97 + k * 300) % 1440)), options);
    expect(random.recurring).toBe(false);
  });
  it('takes a calendar on evidence only: two of its days off skipped, never one by chance, never one with none in the period', () => {
    // A Mon–Fri flow that happened to miss 2026-10-12 (one of BR's days off in the period) and comes on the others.
    const days = flowDays((date, w) => w >= 1 && w <= 5 && date !== '2026-10-12', (i) => [around(7 * 60, i)]);
    const oneDayOff: CalendarCandidate = { name: 'one_day_off', excludes: (d) => d.weekday === 0 || d.weekday === 6 || d.date === '2026-10-12', excludedWeekdays: [0, 6] };
    // Listed first, with no day off on a weekday in the period: it was given to every Mon–Fri flow.
    const noDayOff: CalendarCandidate = { name: 'no_day_off', excludes: (d) => d.weekday === 0 || d.weekday === 6 || d.date === '2027-12-24', excludedWeekdays: [0, 6] };
    const found = learnSchedule(days, { ...options, calendars: [noDayOff, oneDayOff] });
    if (!found.recurring) throw new Error(found.detail);
    expect(found.schedule.calendar).toBeNull();
    expect(found.schedule.weekdays).toEqual([1, 2, 3, 4, 5]);
    // Two days off skipped: that calendar fits, and is taken over one that fits less well.
    const skipsTwo = learnSchedule(
      flowDays((date, w) => w >= 1 && w <= 5 && !['2026-09-07', '2026-10-12'].includes(date), (i) => [around(7 * 60, i)]),
      { ...options, calendars: [noDayOff, oneDayOff, { name: 'two_days_off', excludes: (d) => d.weekday === 0 || d.weekday === 6 || ['2026-09-07', '2026-10-12'].includes(d.date), excludedWeekdays: [0, 6] }] },
    );
    if (!skipsTwo.recurring) throw new Error(skipsTwo.detail);
    expect(skipsTwo.schedule.calendar).toBe('two_days_off');
    expect(skipsTwo.schedule.calendarEvidence).toEqual({ holidays: 2, skipped: 2 });
  });
});
