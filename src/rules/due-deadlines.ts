import { BusinessCalendar, type CalendarConfig } from '../sla/business-calendar.js';
import type { RuleDefinition } from './registry.js';
import { CronSchedule } from './cron-schedule.js';
import { localDate, localDateFormatter } from './format-time.js';
import { resolveCalendar, type MissingFileRule } from './missing-file.js';

const DAY = 86_400_000;
/** A rule whose deadlines in a period exceed this is not counted (a report over years of a 1-minute cron). */
export const MAX_DUE_COUNTED = 200_000;

/**
 * The local dates of a missing_file rule's deadlines whose local date (in the rule's zone) is in [from, to] and that
 * have come by `now`, the calendar's days skipped: the deadlines a report over the period owes (contract section
 * 11a, `due`). Undefined past MAX_DUE_COUNTED.
 */
export function dueDeadlines(
  rule: MissingFileRule,
  calendars: ReadonlyMap<string, BusinessCalendar>,
  from: string,
  to: string,
  now: number,
): string[] | undefined {
  const schedule = new CronSchedule(rule.deadline, rule.timezone);
  const calendar = resolveCalendar(rule, { calendars });
  const formatter = localDateFormatter(rule.timezone);
  // From a day before the first local date's midnight in any zone to a day after the last's.
  const end = Math.min(now, Date.parse(`${to}T00:00:00Z`) + 2 * DAY);
  const out: string[] = [];
  for (let t = schedule.after(Date.parse(`${from}T00:00:00Z`) - 2 * DAY); t !== undefined && t <= end; t = schedule.after(t)) {
    const day = localDate(t, rule.timezone, formatter);
    if (day.date < from || day.date > to) continue;
    if (!calendar.empty && calendar.excludes(day)) continue;
    out.push(day.date);
    if (out.length > MAX_DUE_COUNTED) return undefined;
  }
  return out;
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
): string[] | undefined {
  const rule = rules.find((r) => r.name === name);
  if (!rule || rule.type !== 'missing_file') return undefined;
  let built = builtCalendars.get(calendars);
  if (!built) {
    built = new Map(Object.entries(calendars).map(([n, c]) => [n, new BusinessCalendar(c)]));
    builtCalendars.set(calendars, built);
  }
  return dueDeadlines(rule, built, from, to, now);
}
