import { BusinessCalendar, WEEKDAYS, type CalendarConfig } from './business-calendar.js';
import { HOLIDAY_CORRECTIONS } from './holiday-corrections.js';

/** A named calendar's year as people check it: which holidays count, which do not, and which days are business days. */
export interface CalendarYear {
  name: string;
  year: number;
  holidays: { country: string; region: string | null; types: string[] } | null;
  exclude_weekdays: string[];
  exclude_dates: string[];
  /** Every holiday of the year the library and the project's corrections know, counted or not. */
  days: Array<{ date: string; weekday: string; name: string; type: string; counted: boolean; source: 'library' | 'correction'; note?: string }>;
  /** Every day of the year that expects no file, with its reasons (a counted holiday, an excluded date, an excluded weekday). */
  non_business_days: Array<{ date: string; weekday: string; reasons: string[] }>;
  /** Days of the year on which a file is expected (not excluded by weekday, date or counted holiday). */
  business_days: number;
}

const DAY_MS = 86_400_000;

/** The year asked for (`YYYY`, 1970–2200), this year (in UTC) when none is; undefined for anything else. */
export function calendarYearOf(text: string | undefined, now: number): number | undefined {
  if (text === undefined) return new Date(now).getUTCFullYear();
  const year = /^\d{4}$/.test(text) ? Number(text) : Number.NaN;
  return year >= 1970 && year <= 2200 ? year : undefined;
}

/** `transfer-watch calendar show` and `GET /api/v1/calendars/NAME`: one calendar's year. */
export function calendarYear(name: string, config: CalendarConfig, year: number): CalendarYear {
  const calendar = new BusinessCalendar(config);
  const weekdayOf = (date: string): string => WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()] ?? '';
  const days = calendar.holidayEntries(year).map((h) => {
    const correction = h.source === 'correction' ? HOLIDAY_CORRECTIONS.find((c) => h.date.endsWith(c.monthDay)) : undefined;
    return { date: h.date, weekday: weekdayOf(h.date), name: h.name, type: h.type, counted: h.counted, source: h.source, ...(correction ? { note: correction.reason } : {}) };
  });
  let business = 0;
  const nonBusiness: CalendarYear['non_business_days'] = [];
  const counted = new Map(days.filter((d) => d.counted).map((d) => [d.date, d]));
  const excludedDates = new Set(config.exclude_dates);
  const excludedWeekdays = new Set(config.exclude_weekdays);
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    const weekday = WEEKDAYS[new Date(t).getUTCDay()] ?? '';
    if (!calendar.excludes({ date, weekday: new Date(t).getUTCDay() })) {
      business += 1;
      continue;
    }
    const reasons: string[] = [];
    const holiday = counted.get(date);
    if (holiday) reasons.push(`holiday: ${holiday.name} (${holiday.type}, ${holiday.source === 'correction' ? 'a correction of the holiday library' : 'holiday library'})`);
    if (excludedDates.has(date)) reasons.push('date excluded by the config');
    if (excludedWeekdays.has(weekday as (typeof WEEKDAYS)[number])) reasons.push(`weekday excluded (${weekday})`);
    nonBusiness.push({ date, weekday, reasons });
  }
  return {
    name,
    year,
    holidays: config.holidays ? { country: config.holidays.country, region: config.holidays.region ?? null, types: [...config.holidays.types] } : null,
    exclude_weekdays: [...config.exclude_weekdays],
    exclude_dates: config.exclude_dates.filter((d) => d.startsWith(`${year}-`)),
    days,
    non_business_days: nonBusiness,
    business_days: business,
  };
}

/** The holidays a calendar counts in a range of local dates, with the rules that read it (the `/sla` page names them). */
export interface CalendarHolidays {
  /** The calendar's name in `calendars:`, or `rule NAME` for one written in a rule. */
  calendar: string;
  rules: string[];
  holidays: Array<{ date: string; name: string; source: 'library' | 'correction' }>;
}

/**
 * The counted holidays between `from` and `to` (local dates, inclusive) of every calendar a missing_file rule reads:
 * the days the ledger expects no file on, so nobody takes an empty day of the month for "no deadline" unexplained.
 */
export function holidaysOfRules(
  rules: ReadonlyArray<{ name: string; type: string; calendar?: unknown }>,
  calendars: Readonly<Record<string, CalendarConfig>>,
  from: string,
  to: string,
): CalendarHolidays[] {
  const byCalendar = new Map<string, { config: CalendarConfig; rules: string[] }>();
  for (const rule of rules) {
    if (rule.type !== 'missing_file' || rule.calendar === undefined) continue;
    const named = typeof rule.calendar === 'string';
    const name = named ? (rule.calendar as string) : `rule ${rule.name}`;
    const config = named ? calendars[rule.calendar as string] : (rule.calendar as CalendarConfig);
    if (!config?.holidays) continue;
    const entry = byCalendar.get(name) ?? { config, rules: [] };
    entry.rules.push(rule.name);
    byCalendar.set(name, entry);
  }
  const years: number[] = [];
  for (let y = Number(from.slice(0, 4)); y <= Number(to.slice(0, 4)); y++) years.push(y);
  const out: CalendarHolidays[] = [];
  for (const [name, { config, rules: readers }] of byCalendar) {
    const calendar = new BusinessCalendar(config);
    const holidays = years
      .flatMap((y) => calendar.holidayEntries(y))
      .filter((h) => h.counted && h.date >= from && h.date <= to)
      .map((h) => ({ date: h.date, name: h.name, source: h.source }));
    if (holidays.length > 0) out.push({ calendar: name, rules: readers, holidays });
  }
  return out.sort((a, b) => a.calendar.localeCompare(b.calendar));
}

