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
  /** Days of the year on which a file is expected (not excluded by weekday, date or counted holiday). */
  business_days: number;
}

const DAY_MS = 86_400_000;

/** `transfer-watch calendar show` and `GET /api/v1/calendars/NAME`: one calendar's year. */
export function calendarYear(name: string, config: CalendarConfig, year: number): CalendarYear {
  const calendar = new BusinessCalendar(config);
  const weekdayOf = (date: string): string => WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()] ?? '';
  const days = calendar.holidayEntries(year).map((h) => {
    const correction = h.source === 'correction' ? HOLIDAY_CORRECTIONS.find((c) => h.date.endsWith(c.monthDay)) : undefined;
    return { date: h.date, weekday: weekdayOf(h.date), name: h.name, type: h.type, counted: h.counted, source: h.source, ...(correction ? { note: correction.reason } : {}) };
  });
  let business = 0;
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    if (!calendar.excludes({ date, weekday: new Date(t).getUTCDay() })) business += 1;
  }
  return {
    name,
    year,
    holidays: config.holidays ? { country: config.holidays.country, region: config.holidays.region ?? null, types: [...config.holidays.types] } : null,
    exclude_weekdays: [...config.exclude_weekdays],
    exclude_dates: config.exclude_dates.filter((d) => d.startsWith(`${year}-`)),
    days,
    business_days: business,
  };
}
