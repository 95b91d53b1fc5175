import { BusinessCalendar, type CalendarConfig } from '../sla/business-calendar.js';
import type { RuleDefinition } from './registry.js';
import { Cron } from 'croner';
import { EventLoopShare, TimeSlice } from '../util/time-slice.js';
import { localDate, localDateFormatter } from './format-time.js';
import { resolveCalendar, type MissingFileRule } from './missing-file.js';

const DAY = 86_400_000;
/**
 * A rule whose deadlines in a period exceed this is not counted (`due` null): croner takes ~0.3 ms a zoned run, so a
 * month of a 10-minute cron (4,320) costs about a second and a month of a 20-second one would cost a minute.
 */
export const MAX_DUE_COUNTED = 5_000;
/** Runs asked of croner at once: about 10 ms of its zoned runs (a period of two years is 730 runs, half a second). */
const BATCH = 16;
/** The event loop's turn is given back after this much work (health checks, polls and scrapes wait meanwhile). */
const SLICE_MS = 10;
/** A batch of runs is already ~10 ms: the clock is read before each. */
const CHECK_EVERY_BATCH = 1;

/**
 * The local dates of a missing_file rule's deadlines whose local date (in the rule's zone) is in [from, to] and that
 * have come by `now`, the calendar's days skipped: the deadlines a report over the period owes (contract section
 * 11a, `due`). Undefined past MAX_DUE_COUNTED. Computed in slices that give the event loop back: a two-year report held
 * it 550 ms in one go.
 */
export async function dueDeadlines(
  rule: MissingFileRule,
  calendars: ReadonlyMap<string, BusinessCalendar>,
  from: string,
  to: string,
  now: number,
): Promise<string[] | undefined> {
  const cron = new Cron(rule.deadline, { timezone: rule.timezone, paused: true });
  const calendar = resolveCalendar(rule, { calendars });
  const formatter = localDateFormatter(rule.timezone);
  // From a day before the first local date's midnight in any zone to a day after the last's.
  const end = Math.min(now, Date.parse(`${to}T00:00:00Z`) + 2 * DAY);
  const out: string[] = [];
  let runs = 0;
  let cursor = new Date(Date.parse(`${from}T00:00:00Z`) - 2 * DAY);
  const slice = new TimeSlice(new EventLoopShare(SLICE_MS), CHECK_EVERY_BATCH);
  for (;;) {
    if (slice.spent()) await slice.yield();
    const batch = cron.nextRuns(BATCH, cursor);
    for (const run of batch) {
      const t = run.getTime();
      if (t > end) return out;
      if (++runs > MAX_DUE_COUNTED) return undefined;
      const day = localDate(t, rule.timezone, formatter);
      if (day.date < from || day.date > to) continue;
      if (!calendar.empty && calendar.excludes(day)) continue;
      out.push(day.date);
    }
    const last = batch[batch.length - 1];
    if (batch.length < BATCH || last === undefined) return out;
    cursor = last;
  }
}

/** Calendars built once per config object (a reload gives a new one): the holiday library is costly to set up. */
const builtCalendars = new WeakMap<object, ReadonlyMap<string, BusinessCalendar>>();

/**
 * The due deadlines' local dates of the configured missing_file rule `name` over [from, to] (see `dueDeadlines`),
 * or undefined when no such rule is configured now.
 */
export function dueOfRule(
  rules: readonly RuleDefinition[],
  calendars: Readonly<Record<string, CalendarConfig>>,
  name: string,
  from: string,
  to: string,
  now: number,
): Promise<string[] | undefined> {
  const rule = rules.find((r) => r.name === name);
  if (!rule || rule.type !== 'missing_file') return Promise.resolve(undefined);
  let built = builtCalendars.get(calendars);
  if (!built) {
    built = new Map(Object.entries(calendars).map(([n, c]) => [n, new BusinessCalendar(c)]));
    builtCalendars.set(calendars, built);
  }
  // A page and its report ask the same within the minute: counted once (per rule as configured now), also when they
  // ask at once (the promise is remembered).
  const key = JSON.stringify([rule.deadline, rule.timezone, rule.calendar, from, to, Math.floor(now / MEMO_MS)]);
  let memo = memos.get(rule);
  if (!memo) memos.set(rule, (memo = new Map()));
  if (!memo.has(key)) {
    if (memo.size >= MEMO_PER_RULE) memo.clear();
    memo.set(key, dueDeadlines(rule, built, from, to, now));
  }
  return memo.get(key) as Promise<string[] | undefined>;
}

const MEMO_MS = 60_000;
const MEMO_PER_RULE = 16;
const memos = new WeakMap<object, Map<string, Promise<string[] | undefined>>>();
