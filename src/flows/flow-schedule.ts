import type { LocalDay } from '../sla/business-calendar.js';
import { zonedTime } from '../util/zoned-time.js';
import type { FlowDay } from './flow-summary.js';

/**
 * The schedule a flow keeps, learned from its arrivals: the days it comes (every day, some weekdays, a calendar's
 * business days, a weekday a week, a day a month), how many times a day, and the deadlines to propose. Every
 * decision is a count the operator can check in the evidence: presence per weekday, holidays skipped, arrivals
 * a day, the arrival quantiles a deadline comes from.
 */

const DAY_MS = 86_400_000;
/** At most this many deadlines a day: a flow that comes more often is traffic, not a file someone waits for. */
export const MAX_DEADLINES = 6;
/** A weekday belongs to the schedule when the flow came on at least this share of them. */
const WEEKDAY_PRESENCE = 0.5;
/** A recurring flow came in at least this share of its scheduled periods... */
const MIN_PRESENCE = 0.8;
/** ... on at least this share of them the usual number of times ... */
const MIN_USUAL_COUNT = 0.7;
/** ... and the middle 80 % of its arrivals at one deadline lie within this many minutes. */
const MAX_SPREAD_MINUTES = 8 * 60;
/** A calendar fits when the flow stayed away on at least this share of its excluded days. */
const HOLIDAY_ABSENCE = 0.8;

export interface CalendarCandidate {
  name: string;
  excludes(day: LocalDay): boolean;
  /** Weekdays (0 = Sunday) the calendar excludes as such. */
  excludedWeekdays: readonly number[];
}

/** The holiday library's calendars, asked where no configured calendar fits (holiday-calendars.ts). */
export interface HolidayCandidates {
  fitting(skipped: readonly string[], min: number): Array<CalendarCandidate & { country: string; region?: string }>;
  /** Of calendars that fit a flow's days alike, the one to propose for a flow kept in `zone`, or none. */
  pick<C extends CalendarCandidate & { country: string; region?: string }>(alike: readonly C[], zone: string, since: number, until: number): C | undefined;
}

export interface ScheduleOptions {
  timezone: string;
  /** Where no configured calendar fits a business-day flow: the library's calendars its skipped days are matched to. */
  holidays?: HolidayCandidates;
  /** The period read: arrivals before `since` or after `until` are not in the summary. */
  since: number;
  until: number;
  minOccurrences: number;
  calendars: readonly CalendarCandidate[];
}

/**
 * The arrival quantiles of one daily deadline, in minutes of the local day: of the arrivals its deadline was set
 * from (the late outliers past the fence left out, and counted), so that the figures shown beside a deadline are the
 * ones that explain it (issue 52: 9 of 35 flows showed a p95 after their own deadline).
 */
export interface ArrivalStats {
  p50: number;
  p95: number;
  max: number;
  /** Arrivals past the robust fence: late days the deadline does not move for. */
  outliers: number;
  /** The latest arrival of all, outliers included. */
  latest: number;
}

/** A deadline's arrivals split at the robust fence (median + 4 scaled MADs, at least 30 min). */
function splitAtFence(sortedMinutes: readonly number[]): { inliers: number[]; median: number; sigma: number; outliers: number } {
  const m = median(sortedMinutes);
  const deviations = sortedMinutes.map((x) => Math.abs(x - m)).sort((a, b) => a - b);
  const sigma = 1.4826 * median(deviations);
  const fence = m + Math.max(4 * sigma, 30);
  const inliers = sortedMinutes.filter((x) => x <= fence);
  return { inliers, median: m, sigma, outliers: sortedMinutes.length - inliers.length };
}

/** The figures of one deadline's arrivals, as its deadline sees them (outliers counted apart). */
export function arrivalStats(sortedMinutes: readonly number[]): ArrivalStats {
  const { inliers, outliers } = splitAtFence(sortedMinutes);
  return { p50: median(inliers), p95: quantile(inliers, 0.95), max: inliers[inliers.length - 1] as number, outliers, latest: sortedMinutes[sortedMinutes.length - 1] as number };
}

export interface LearnedSchedule {
  kind: 'daily' | 'weekly' | 'monthly';
  /** ISO weekdays (1 = Monday … 7 = Sunday); for monthly the weekdays it came on. */
  weekdays: number[];
  calendar: string | null;
  /** Monthly: the day of the month, or `last`. */
  monthDay?: number | 'last';
  /**
   * Proposed deadlines, minutes from the local midnight the flow's day belongs to, one per daily arrival: past 24 h
   * (1440) for a night flow whose deadline is the next morning.
   */
  deadlines: number[];
  /**
   * Minute of the local day the flow's day begins at: 0, or for a night flow (arrivals on both sides of midnight)
   * the middle of its quiet hours. Arrival minutes and deadlines run from it to 24 h later.
   */
  dayStart: number;
  /** The missing_file window, minutes: (deadline − window, deadline] holds the usual arrivals. */
  windowMinutes: number;
  occurrences: number;
  missed: number;
  late: number;
  arrivals: ArrivalStats[];
  firstSeen: number;
  lastSeen: number;
  /** Why the calendar was chosen (or not): its excluded days on the flow's weekdays and how many the flow skipped. */
  calendarEvidence: { holidays: number; skipped: number } | null;
  /**
   * A calendar of the holiday library the config lacks, chosen on the days the flow skipped (contract 13a): `calendar`
   * names it, and the config must add it. `days` are the skipped days that decided it; `alike` other calendars that
   * fit as well (another zone's).
   */
  inferredCalendar?: { country: string; region?: string; days: string[]; alike: string[] };
  /** Several library calendars fit its skipped days equally: none proposed, these named. */
  ambiguousCalendars?: string[];
  /** Arrival days outside the schedule (a Saturday now and then). */
  offSchedule: number;
  /**
   * How unsteady its arrivals are in this schedule's zone: per daily arrival the mean distance of its arrivals from
   * their median, in minutes, summed. A file sent at a fixed UTC time is an hour off half its days in a zone whose
   * clock changed in the span, and steady in UTC (contract 13a: each flow its own clock).
   */
  spreadMinutes: number;
}

export type NotRecurringReason = 'too_few_periods' | 'irregular_days' | 'irregular_count' | 'too_frequent' | 'spread_arrivals';

export type ScheduleFinding = { recurring: true; schedule: LearnedSchedule } | { recurring: false; reason: NotRecurringReason; detail: string };

interface LocalArrival {
  day: number;
  minute: number;
}

/** Days since 1970-01-01 of a local civil date. */
function dayNumber(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

function dateOf(dayNum: number): string {
  return new Date(dayNum * DAY_MS).toISOString().slice(0, 10);
}

/** 0 = Sunday. */
function weekdayOf(dayNum: number): number {
  return (((dayNum + 4) % 7) + 7) % 7;
}

function localArrival(ms: number, timezone: string): LocalArrival {
  const z = zonedTime(ms, timezone);
  return { day: dayNumber(`${z.year}-${z.month}-${z.day}`), minute: Number(z.hour) * 60 + Number(z.minute) };
}

/** Nearest-rank quantile of sorted numbers. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

function median(sorted: readonly number[]): number {
  return quantile(sorted, 0.5);
}

function roundUp(value: number, step: number): number {
  return Math.ceil(value / step) * step;
}

/**
 * The deadline of one daily arrival: after the bulk of its arrivals and robust to its late outliers. Arrivals past
 * a robust fence (median + 4 scaled MADs, at least 30 min) are outliers — a file 3 h late once a month stays late
 * and does not move the deadline 3 h (nor its p95: one such day in 20 is 5 % of them). The deadline is 10 min after
 * the inliers' p99, rounded up to 5 min: never before the usual arrival, at most 15 min after its p99.
 */
export function proposeDeadline(sortedMinutes: readonly number[], dayStart = 0): number {
  const { inliers, median: m, sigma } = splitAtFence(sortedMinutes);
  // Ten weekly files hold no p99: their largest is about the p95 of what comes. Below SMALL_SAMPLE arrivals the p99
  // is also estimated from their spread (median + 2.33 robust sigmas), the later of the two.
  const p99 = inliers.length < SMALL_SAMPLE ? Math.max(quantile(inliers, 0.99), m + 2.33 * sigma) : quantile(inliers, 0.99);
  // Before the flow's next day begins: 23:55 of its day (a night flow's day ends the next morning).
  return Math.min(roundUp(p99 + 10, 5), dayStart + 23 * 60 + 55);
}

/** Fewer arrivals than this at one time of day: the p99 is estimated from their spread too. */
const SMALL_SAMPLE = 20;

/**
 * Learns a flow's schedule from its days. Days are local to `timezone`; the first local day the period covers
 * only in part is left out, and so is the flow's time before its first arrival (a flow that began last week is
 * judged on last week).
 */
export function learnSchedule(days: Iterable<FlowDay>, o: ScheduleOptions): ScheduleFinding {
  const arrivals: LocalArrival[] = [];
  let firstSeen = Infinity;
  let lastSeen = -Infinity;
  let denseDays = 0;
  let dayCount = 0;
  for (const d of days) {
    dayCount++;
    if (d.count > d.arrivals.length) denseDays++;
    for (const ms of d.arrivals) {
      arrivals.push(localArrival(ms, o.timezone));
      firstSeen = Math.min(firstSeen, ms);
      lastSeen = Math.max(lastSeen, ms);
    }
  }
  if (arrivals.length === 0) return { recurring: false, reason: 'too_few_periods', detail: 'no arrival' };
  if (denseDays > dayCount / 2) return { recurring: false, reason: 'too_frequent', detail: 'more than 16 files on most days' };

  // A night flow (a batch at 23:58 ± 5 min) is one daily flow: its day begins in the quiet hours, not at midnight.
  const dayStart = nightDayStart(arrivals);
  const flowDay = (a: LocalArrival): LocalArrival => (a.minute < dayStart ? { day: a.day - 1, minute: a.minute + 24 * 60 } : a);
  const sinceLocal = flowDay(localArrival(o.since, o.timezone));
  const untilLocal = flowDay(localArrival(o.until, o.timezone));
  const startDay = Math.max(sinceLocal.minute === dayStart ? sinceLocal.day : sinceLocal.day + 1, flowDay(localArrival(firstSeen, o.timezone)).day);
  const endDay = untilLocal.day;
  const byDay = new Map<number, number[]>();
  for (const local of arrivals) {
    const a = flowDay(local);
    if (a.day < startDay || a.day > endDay) continue;
    let list = byDay.get(a.day);
    if (!list) byDay.set(a.day, (list = []));
    list.push(a.minute);
  }
  for (const list of byDay.values()) list.sort((a, b) => a - b);

  // Presence per weekday.
  const total = new Array<number>(7).fill(0);
  const present = new Array<number>(7).fill(0);
  for (let d = startDay; d <= endDay; d++) {
    const w = weekdayOf(d);
    total[w] = (total[w] ?? 0) + 1;
    if (byDay.has(d)) present[w] = (present[w] ?? 0) + 1;
  }
  const weekdays = [0, 1, 2, 3, 4, 5, 6].filter((w) => (total[w] ?? 0) > 0 && (present[w] ?? 0) / (total[w] ?? 1) >= WEEKDAY_PRESENCE);
  if (weekdays.length === 0) return dayStart === 0 ? monthly(byDay, startDay, endDay, untilLocal.minute, firstSeen, lastSeen, o) : { recurring: false, reason: 'irregular_days', detail: `came on ${byDay.size} nights, on no weekday regularly` };

  const onWeekdays = new Set(weekdays);
  const at: ScheduleContext = { byDay, startDay, endDay, onWeekdays, weekdays, dayStart, untilMinute: untilLocal.minute, firstSeen, lastSeen, o };
  const chosen = chooseCalendar(onWeekdays, byDay, startDay, endDay, o.calendars);
  const finding = scheduleOn(at, chosen.calendar, chosen.evidence);
  if (chosen.calendar || !o.holidays || weekdays.length < 2 || (!finding.recurring && finding.reason !== 'irregular_days')) return finding;
  return inferCalendar(at, o.holidays, finding);
}

/** What learning a flow's schedule on one calendar needs of its days. */
interface ScheduleContext {
  byDay: ReadonlyMap<number, number[]>;
  startDay: number;
  endDay: number;
  onWeekdays: ReadonlySet<number>;
  weekdays: readonly number[];
  dayStart: number;
  untilMinute: number;
  firstSeen: number;
  lastSeen: number;
  o: ScheduleOptions;
}

/**
 * A business-day flow no configured calendar fits, whose skipped weekdays are public holidays of a country (or
 * region) the library knows: the schedule on that calendar, which the config must add (contract 13a). Chosen on the
 * same evidence as a configured one (at least two of its days off skipped, the best fit); among calendars that fit
 * as well, HolidayCandidates.pick decides (the flow's zone's country, or its clock's); when none is picked, none is
 * proposed and the evidence names them.
 */
function inferCalendar(at: ScheduleContext, holidays: HolidayCandidates, without: ScheduleFinding): ScheduleFinding {
  const skipped: string[] = [];
  for (let d = at.startDay; d < at.endDay; d++) if (at.onWeekdays.has(weekdayOf(d)) && !at.byDay.has(d)) skipped.push(dateOf(d));
  if (skipped.length < MIN_DAYS_OFF_SKIPPED) return without;
  const candidates = holidays.fitting(skipped, MIN_DAYS_OFF_SKIPPED);
  const best = chooseCalendar(at.onWeekdays, at.byDay, at.startDay, at.endDay, candidates);
  if (!best.calendar) return without;
  const fits = [best.calendar, ...best.alike] as Array<CalendarCandidate & { country: string; region?: string }>;
  const pick = holidays.pick(fits, at.o.timezone, at.o.since, at.o.until);
  if (!pick) {
    if (!without.recurring) return without;
    return { ...without, schedule: { ...without.schedule, ambiguousCalendars: fits.map((c) => c.name).sort() } };
  }
  const evidence = pick === best.calendar ? best.evidence : daysOffOf(pick, at.onWeekdays, at.byDay, at.startDay, at.endDay);
  const finding = scheduleOn(at, pick, evidence);
  if (!finding.recurring) return without;
  const days = skipped.filter((date) => pick.excludes({ date, weekday: weekdayOf(dayNumber(date)) }));
  return {
    ...finding,
    schedule: { ...finding.schedule, inferredCalendar: { country: pick.country, ...(pick.region ? { region: pick.region } : {}), days, alike: fits.filter((c) => c !== pick).map((c) => c.name).sort() } },
  };
}

/** The schedule of a flow on its weekdays less a calendar's days off (or none): presence, arrivals, deadlines. */
function scheduleOn(at: ScheduleContext, calendar: CalendarCandidate | undefined, evidence: { holidays: number; skipped: number }): ScheduleFinding {
  const { byDay, startDay, endDay, onWeekdays, weekdays, dayStart, untilMinute, firstSeen, lastSeen, o } = at;
  const expected: number[] = [];
  let offSchedule = 0;
  for (let d = startDay; d <= endDay; d++) {
    const scheduled = onWeekdays.has(weekdayOf(d)) && !(calendar?.excludes({ date: dateOf(d), weekday: weekdayOf(d) }) ?? false);
    if (scheduled) expected.push(d);
    else if (byDay.has(d)) offSchedule++;
  }
  const presentDays = expected.filter((d) => byDay.has(d));
  if (presentDays.length < o.minOccurrences) {
    return { recurring: false, reason: 'too_few_periods', detail: `${presentDays.length} of the ${o.minOccurrences} scheduled days needed` };
  }
  // The last day may still be before its deadline: it counts only once it has an arrival (checked again below).
  const judged = expected.filter((d) => d < endDay || byDay.has(d));
  if (presentDays.length < MIN_PRESENCE * judged.length) {
    return { recurring: false, reason: 'irregular_days', detail: `came on ${presentDays.length} of ${judged.length} scheduled days` };
  }
  if (offSchedule > Math.max(2, 0.25 * presentDays.length)) {
    return { recurring: false, reason: 'irregular_days', detail: `${offSchedule} arrival days outside the schedule` };
  }
  const daily = dailyArrivals(presentDays.map((d) => byDay.get(d) ?? []), dayStart);
  if ('reason' in daily) return { recurring: false, ...daily };

  const deadlines = alignDeadlines(daily.clusters.map((c) => proposeDeadline(c, dayStart)), dayStart);
  // Occurrences per (day, deadline): the day's arrivals go to the nearest usual arrival.
  let occurrences = 0;
  let missed = 0;
  let late = 0;
  const centers = daily.clusters.map((c) => median(c));
  for (const d of expected) {
    const minutes = byDay.get(d) ?? [];
    const firstPer = new Array<number | undefined>(deadlines.length).fill(undefined);
    for (const m of minutes) {
      const i = nearest(centers, m);
      if (firstPer[i] === undefined) firstPer[i] = m;
    }
    for (let i = 0; i < deadlines.length; i++) {
      const first = firstPer[i];
      const deadline = deadlines[i] as number;
      if (first === undefined) {
        if (d < endDay || untilMinute >= deadline) missed++;
        continue;
      }
      occurrences++;
      if (first > deadline) late++;
    }
  }
  return {
    recurring: true,
    schedule: {
      kind: weekdays.length === 1 ? 'weekly' : 'daily',
      weekdays: weekdays.map((w) => (w === 0 ? 7 : w)).sort((a, b) => a - b),
      calendar: calendar?.name ?? null,
      deadlines,
      windowMinutes: windowOf(daily.clusters, deadlines),
      dayStart,
      occurrences,
      missed,
      late,
      arrivals: daily.clusters.map(arrivalStats),
      firstSeen,
      lastSeen,
      calendarEvidence: calendar ? evidence : null,
      offSchedule,
      spreadMinutes: spreadOf(daily.clusters),
    },
  };
}

/** Arrivals this close to midnight on both sides make a night flow. */
const NIGHT_MARGIN_MINUTES = 60;
/** Of a night flow's arrivals, at least this share lie within NIGHT_MARGIN_MINUTES of midnight. */
const NIGHT_SHARE = 0.5;
/** A night flow's quiet hours: its day begins in the middle of a gap of its arrivals at least this long. */
const NIGHT_MIN_GAP_MINUTES = 4 * 60;

/**
 * The minute a flow's day begins at: 0, unless its arrivals straddle midnight (some within an hour before it, some
 * within an hour after), when it is the middle of the longest gap between its arrival times of day, rounded down to
 * the hour. A nightly batch at 23:58 ± 5 min came on some days twice and on others not at all at midnight; its day
 * from 12:00 to 12:00 holds one arrival each.
 */
function nightDayStart(arrivals: readonly LocalArrival[]): number {
  const minutes = [...new Set(arrivals.map((a) => a.minute))].sort((a, b) => a - b);
  const first = minutes[0];
  const last = minutes[minutes.length - 1];
  if (first === undefined || last === undefined || first >= NIGHT_MARGIN_MINUTES || last < 24 * 60 - NIGHT_MARGIN_MINUTES) return 0;
  // A day flow with a late file once near midnight and an early one once after it is no night flow: the bulk of its
  // arrivals must be around midnight.
  const nearMidnight = arrivals.filter((a) => a.minute < NIGHT_MARGIN_MINUTES || a.minute >= 24 * 60 - NIGHT_MARGIN_MINUTES).length;
  if (nearMidnight < NIGHT_SHARE * arrivals.length) return 0;
  let gap = 0;
  let start = 0;
  for (let i = 1; i < minutes.length; i++) {
    const g = (minutes[i] as number) - (minutes[i - 1] as number);
    if (g > gap) [gap, start] = [g, minutes[i - 1] as number];
  }
  if (gap < NIGHT_MIN_GAP_MINUTES) return 0;
  return Math.floor((start + gap / 2) / 60) * 60;
}

/** Per cluster of sorted minutes the mean absolute deviation from its median, summed. */
function spreadOf(clusters: readonly (readonly number[])[]): number {
  let sum = 0;
  for (const c of clusters) {
    if (c.length === 0) continue;
    const m = median(c);
    sum += c.reduce((n, x) => n + Math.abs(x - m), 0) / c.length;
  }
  return sum;
}

function nearest(centers: readonly number[], m: number): number {
  let best = 0;
  for (let i = 1; i < centers.length; i++) if (Math.abs((centers[i] as number) - m) < Math.abs((centers[best] as number) - m)) best = i;
  return best;
}

/**
 * The calendar whose excluded days on the flow's weekdays the flow stays away from (the most such days skipped
 * wins); none when the flow came on them. With no excluded day in the period there is no evidence either way: a
 * Monday-to-Friday flow then takes the first configured calendar that fits (business days are what calendars are
 * written for), and its evidence says the period held no holiday.
 */
function chooseCalendar(
  weekdays: ReadonlySet<number>,
  byDay: ReadonlyMap<number, number[]>,
  startDay: number,
  endDay: number,
  calendars: readonly CalendarCandidate[],
): { calendar: CalendarCandidate | undefined; evidence: { holidays: number; skipped: number }; alike: CalendarCandidate[] } {
  let best: { calendar: CalendarCandidate; holidays: number; skipped: number } | undefined;
  let alike: CalendarCandidate[] = [];
  for (const c of calendars) {
    if (c.excludedWeekdays.some((w) => weekdays.has(w))) continue;
    const { holidays, skipped } = daysOffOf(c, weekdays, byDay, startDay, endDay);
    // On evidence only (contract 13a): at least MIN_DAYS_OFF_SKIPPED of its days off skipped. One day off proves
    // nothing (a UK flow that happened to miss Saxony's one holiday got Saxony's calendar), and a calendar with no
    // day off in the period is no better than none (the first one listed was given to every Mon–Fri flow).
    if (skipped < MIN_DAYS_OFF_SKIPPED || skipped < HOLIDAY_ABSENCE * holidays) continue;
    // The best fit: the most days off skipped, then the fewest days off the flow came on anyway.
    if (!best || skipped > best.skipped || (skipped === best.skipped && holidays - skipped < best.holidays - best.skipped)) {
      best = { calendar: c, holidays, skipped };
      alike = [];
    } else if (skipped === best.skipped && holidays === best.holidays) alike.push(c);
  }
  if (best) return { calendar: best.calendar, evidence: { holidays: best.holidays, skipped: best.skipped }, alike };
  return { calendar: undefined, evidence: { holidays: 0, skipped: 0 }, alike: [] };
}

/**
 * A calendar's days off on the flow's weekdays in the period, and how many of them the flow stayed away from. The
 * period's last day may end before the flow's time: staying away on it is no evidence.
 */
function daysOffOf(c: CalendarCandidate, weekdays: ReadonlySet<number>, byDay: ReadonlyMap<number, number[]>, startDay: number, endDay: number): { holidays: number; skipped: number } {
  let holidays = 0;
  let skipped = 0;
  for (let d = startDay; d <= endDay; d++) {
    const w = weekdayOf(d);
    if ((d === endDay && !byDay.has(d)) || !weekdays.has(w) || !c.excludes({ date: dateOf(d), weekday: w })) continue;
    holidays++;
    if (!byDay.has(d)) skipped++;
  }
  return { holidays, skipped };
}

/**
 * How many times a day the flow comes (the usual count) and the arrivals of each time: on the days with the usual
 * count, the i-th arrival belongs to the i-th deadline.
 */
function dailyArrivals(perDay: readonly number[][], dayStart: number): { clusters: number[][] } | { reason: NotRecurringReason; detail: string } {
  const counts = new Map<number, number>();
  for (const minutes of perDay) counts.set(minutes.length, (counts.get(minutes.length) ?? 0) + 1);
  let k = 0;
  let kDays = 0;
  for (const [count, days] of counts) if (days > kDays || (days === kDays && count < k)) [k, kDays] = [count, days];
  if (k > MAX_DEADLINES) return { reason: 'too_frequent', detail: `usually ${k} files a day` };
  if (kDays < MIN_USUAL_COUNT * perDay.length) return { reason: 'irregular_count', detail: `${k} a day on only ${kDays} of ${perDay.length} days` };
  const clusters: number[][] = Array.from({ length: k }, () => []);
  for (const minutes of perDay) if (minutes.length === k) minutes.forEach((m, i) => clusters[i]?.push(m));
  for (const c of clusters) c.sort((a, b) => a - b);
  for (const [i, c] of clusters.entries()) {
    const spread = quantile(c, 0.9) - quantile(c, 0.1);
    if (spread > MAX_SPREAD_MINUTES) return { reason: 'spread_arrivals', detail: `arrival ${i + 1} varies over ${Math.round(spread / 60)} h` };
    const next = clusters[i + 1];
    if (next && proposeDeadline(c, dayStart) >= quantile(next, 0.1)) return { reason: 'spread_arrivals', detail: `arrivals ${i + 1} and ${i + 2} overlap` };
  }
  return { clusters };
}

/**
 * Deadlines of one rule share one cron minute: when the times of a day differ in their minute, each moves later to
 * the common minute that moves none more than MAX_ALIGN_SHIFT; otherwise they stay as they are (one rule per time).
 */
const MAX_ALIGN_SHIFT = 10;

function alignDeadlines(deadlines: number[], dayStart: number): number[] {
  if (deadlines.length < 2 || new Set(deadlines.map((d) => d % 60)).size === 1) return deadlines;
  let best: number[] | undefined;
  let bestShift = Infinity;
  for (const d of deadlines) {
    const minute = d % 60;
    const moved = deadlines.map((x) => x + ((minute - (x % 60) + 60) % 60));
    const shift = Math.max(...moved.map((x, i) => x - (deadlines[i] as number)));
    if (shift < bestShift && moved.every((x) => x < dayStart + 24 * 60)) [best, bestShift] = [moved, shift];
  }
  return best && bestShift <= MAX_ALIGN_SHIFT ? best : deadlines;
}

/**
 * The window of the rule: from an hour before the earliest arrival of a time to its deadline, in whole hours, and
 * never reaching back to the deadline before it (the previous day's last one for the first).
 */
function windowOf(clusters: readonly number[][], deadlines: readonly number[]): number {
  let window = 0;
  let limit = 23 * 60;
  for (let i = 0; i < deadlines.length; i++) {
    const deadline = deadlines[i] as number;
    const earliest = (clusters[i] as number[])[0] as number;
    window = Math.max(window, roundUp(deadline - earliest + 60, 60));
    const previous = i === 0 ? (deadlines[deadlines.length - 1] as number) - 24 * 60 : (deadlines[i - 1] as number);
    if (deadlines.length > 1 || i > 0) limit = Math.min(limit, deadline - previous);
  }
  return Math.max(60, Math.min(window, limit));
}

/**
 * A flow that came on no weekday often enough: a day a month (a month-end file) when one day of each month holds
 * its arrivals, the same day of the month or the last; recurring only over `minOccurrences` months.
 */
function monthly(
  byDay: ReadonlyMap<number, number[]>,
  startDay: number,
  endDay: number,
  untilMinute: number,
  firstSeen: number,
  lastSeen: number,
  o: ScheduleOptions,
): ScheduleFinding {
  const months = new Map<string, number[]>();
  for (const d of byDay.keys()) {
    const month = dateOf(d).slice(0, 7);
    months.set(month, [...(months.get(month) ?? []), d]);
  }
  const oneDay = [...months.values()].filter((days) => days.length <= 2);
  if (months.size === 0 || oneDay.length < MIN_PRESENCE * months.size) {
    return { recurring: false, reason: 'irregular_days', detail: `came on ${byDay.size} days, on no weekday regularly` };
  }
  const lastOfMonth = (d: number): boolean => dateOf(d + 1).slice(8) === '01';
  const firstDays = [...months.values()].map((days) => Math.min(...days));
  const doms = new Map<number, number>();
  for (const d of firstDays) doms.set(Number(dateOf(d).slice(8)), (doms.get(Number(dateOf(d).slice(8))) ?? 0) + 1);
  const lastCount = firstDays.filter(lastOfMonth).length;
  const [dom, domCount] = [...doms].sort((a, b) => b[1] - a[1])[0] ?? [1, 0];
  const monthDay: number | 'last' | undefined = lastCount >= MIN_PRESENCE * firstDays.length ? 'last' : domCount >= MIN_PRESENCE * firstDays.length ? dom : undefined;
  if (monthDay === undefined) return { recurring: false, reason: 'irregular_days', detail: `came on ${byDay.size} days, on no weekday or day of the month regularly` };
  if (months.size < o.minOccurrences) {
    return { recurring: false, reason: 'too_few_periods', detail: `a day a month, seen in ${months.size} of the ${o.minOccurrences} months needed` };
  }
  const clusters = [firstDays.map((d) => (byDay.get(d) ?? [])[0] as number).sort((a, b) => a - b)];
  const deadline = proposeDeadline(clusters[0] as number[]);
  const late = (clusters[0] as number[]).filter((m) => m > deadline).length;
  let missed = 0;
  for (let d = startDay; d <= endDay; d++) {
    const due = monthDay === 'last' ? lastOfMonth(d) : Number(dateOf(d).slice(8)) === monthDay;
    if (due && !months.has(dateOf(d).slice(0, 7)) && (d < endDay || untilMinute >= deadline)) missed++;
  }
  const weekdays = [...new Set(firstDays.map((d) => weekdayOf(d) || 7))].sort((a, b) => a - b);
  return {
    recurring: true,
    schedule: {
      kind: 'monthly',
      weekdays,
      calendar: null,
      monthDay,
      deadlines: [deadline],
      windowMinutes: windowOf(clusters, [deadline]),
      dayStart: 0,
      occurrences: months.size,
      missed,
      late,
      arrivals: clusters.map(arrivalStats),
      firstSeen,
      lastSeen,
      calendarEvidence: null,
      offSchedule: 0,
      spreadMinutes: spreadOf(clusters),
    },
  };
}

/** Days off of a calendar a flow must have skipped before that calendar is proposed for it (contract 13a). */
export const MIN_DAYS_OFF_SKIPPED = 2;

/** Scheduled periods silent since its last arrival that make a recurring flow *stopped* (contract 13a). */
export const STOPPED_AFTER_PERIODS = 3;

/**
 * A flow that stopped (contract 13a): recurring up to its last arrival, then silent for STOPPED_AFTER_PERIODS or more
 * of the periods that schedule expects (its weekdays, less its calendar's days off; the last day counted once its
 * first deadline has passed). What an operator most needs to hear about, and what the presence rules alone would
 * only call irregular. Monthly flows are left to those rules.
 */
export function stoppedFlow(days: readonly FlowDay[], o: ScheduleOptions): { since: number; missedPeriods: number; schedule: LearnedSchedule } | undefined {
  let lastSeen = -Infinity;
  for (const d of days) for (const ms of d.arrivals) lastSeen = Math.max(lastSeen, ms);
  if (!Number.isFinite(lastSeen) || lastSeen >= o.until) return undefined;
  const lastDay = localArrival(lastSeen, o.timezone).day;
  const until = localArrival(o.until, o.timezone);
  // The missed periods are days after the last arrival: with fewer such days the flow cannot have stopped, and its
  // schedule is not learned a second time (discover learns every flow's; most arrived in the last days).
  if (until.day - lastDay < STOPPED_AFTER_PERIODS) return undefined;
  const before = learnSchedule(days, { ...o, until: lastSeen + 1 });
  if (!before.recurring || before.schedule.kind === 'monthly') return undefined;
  const schedule = before.schedule;
  const weekdays = new Set(schedule.weekdays.map((w) => (w === 7 ? 0 : w)));
  const calendar = schedule.calendar === null ? undefined : o.calendars.find((c) => c.name === schedule.calendar);
  let missedPeriods = 0;
  for (let d = lastDay + 1; d <= until.day; d++) {
    if (!weekdays.has(weekdayOf(d)) || (calendar?.excludes({ date: dateOf(d), weekday: weekdayOf(d) }) ?? false)) continue;
    if (d === until.day && until.minute < (schedule.deadlines[0] ?? 0)) continue;
    missedPeriods++;
  }
  return missedPeriods >= STOPPED_AFTER_PERIODS ? { since: lastSeen, missedPeriods, schedule } : undefined;
}
