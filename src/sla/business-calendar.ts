import { createRequire } from 'node:module';
import type HolidaysType from 'date-holidays';
import { z } from 'zod';
import { correctionsOf } from './holiday-corrections.js';

type Holidays = HolidaysType;
/**
 * date-holidays is loaded when a calendar with holidays is configured, not by every daemon: its data of every
 * country is several MB of heap once parsed (measured on the shipped-rules benchmark).
 */
function holidayLibrary(): typeof HolidaysType {
  return createRequire(import.meta.url)('date-holidays') as typeof HolidaysType;
}

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
/** The holiday types of the holiday library (date-holidays): `public`, `bank`, `school`, `optional`, `observance`. */
export const HOLIDAY_TYPES = ['public', 'bank', 'school', 'optional', 'observance'] as const;

/**
 * A named business calendar (contract section 11, top-level `calendars:`): days on which no file is expected.
 * Holidays come from a maintained library by country and region, so nobody types next year's dates.
 */
export const calendarSchema = z.strictObject({
  holidays: z
    .strictObject({
      /** ISO 3166-1 country code, e.g. `BR`. */
      country: z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166 country code such as BR'),
      /** The state or region code of the library, e.g. `SP`. */
      region: z.string().min(1).optional(),
      types: z.array(z.enum(HOLIDAY_TYPES)).min(1).default(['public']),
    })
    .superRefine((h, ctx) => {
      const Holidays = holidayLibrary();
      const known = new Holidays().getCountries();
      if (!known || !(h.country in known)) {
        ctx.addIssue({ code: 'custom', path: ['country'], message: `unknown country "${h.country}" (the holiday library knows ISO codes such as BR, US, FR)` });
        return;
      }
      if (h.region !== undefined) {
        const regions = new Holidays().getStates(h.country) ?? {};
        if (!(h.region in regions)) {
          const names = Object.keys(regions);
          ctx.addIssue({ code: 'custom', path: ['region'], message: `unknown region "${h.region}" of ${h.country}${names.length > 0 ? ` (known: ${names.slice(0, 30).join(', ')})` : ' (it has no regions)'}` });
        }
      }
    })
    .optional(),
  exclude_dates: z.array(z.iso.date('must be a date as YYYY-MM-DD')).default([]),
  exclude_weekdays: z.array(z.enum(WEEKDAYS)).default([]),
});
export type CalendarConfig = z.output<typeof calendarSchema>;

/** `calendars:` of the config: names to calendars. */
export const calendarsSchema = z.record(z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'must contain only letters, digits, "_", "." and "-"'), calendarSchema).default({});

/** One holiday of a year: the library's, or a correction this project carries (see holiday-corrections.ts). */
export interface HolidayEntry {
  date: string;
  name: string;
  type: string;
  /** Whether the calendar's `holidays.types` count it (a day without an expected file). */
  counted: boolean;
  source: 'library' | 'correction';
}

/** A local date (`YYYY-MM-DD`) and its weekday (0 = Sunday), in the zone the deadline is read in. */
export interface LocalDay {
  date: string;
  weekday: number;
}

/**
 * Whether a local day is excluded: an extra date, an excluded weekday, or a holiday of the configured types.
 * Holidays are computed per year once (the library's rules: Easter, "first Monday of", regional days).
 */
export class BusinessCalendar {
  private readonly dates: Set<string>;
  private readonly weekdays: Set<number>;
  private readonly holidays: Holidays | undefined;
  private readonly types: Set<string>;
  private readonly country: string | undefined;
  private readonly holidayYears = new Map<number, Set<string>>();

  constructor(config: CalendarConfig) {
    this.dates = new Set(config.exclude_dates);
    this.weekdays = new Set(config.exclude_weekdays.map((d) => WEEKDAYS.indexOf(d)));
    const h = config.holidays;
    const Holidays = h ? holidayLibrary() : undefined;
    this.holidays = h && Holidays ? (h.region ? new Holidays(h.country, h.region) : new Holidays(h.country)) : undefined;
    this.types = new Set(config.holidays?.types ?? []);
    this.country = h?.country;
  }

  get empty(): boolean {
    return this.dates.size === 0 && this.weekdays.size === 0 && this.holidays === undefined;
  }

  excludes(day: LocalDay): boolean {
    return this.dates.has(day.date) || this.weekdays.has(day.weekday) || this.isHoliday(day.date);
  }

  /** The holidays the calendar counts in a year, as local dates. */
  holidaysOf(year: number): Set<string> {
    let set = this.holidayYears.get(year);
    if (!set) {
      set = new Set(this.holidayEntries(year).filter((h) => h.counted).map((h) => h.date));
      this.holidayYears.set(year, set);
    }
    return set;
  }

  /**
   * Every holiday of a year the library knows for the country and region, of any type (`counted` says whether this
   * calendar's types count it), and the project's corrections the library lacks; by date.
   */
  holidayEntries(year: number): HolidayEntry[] {
    if (!this.holidays || this.country === undefined) return [];
    const entries: HolidayEntry[] = this.holidays.getHolidays(year).map((h) => ({
      date: h.date.slice(0, 10),
      name: h.name,
      type: h.type,
      counted: this.types.has(h.type),
      source: 'library' as const,
    }));
    for (const c of correctionsOf(this.country, year)) {
      if (entries.some((e) => e.date === c.date && e.counted)) continue;
      entries.push({ date: c.date, name: c.name, type: c.type, counted: this.types.has(c.type), source: 'correction' });
    }
    return entries.sort((a, b) => a.date.localeCompare(b.date));
  }

  /** The weekdays (0 = Sunday) and extra dates the calendar excludes. */
  get excluded(): { weekdays: number[]; dates: string[] } {
    return { weekdays: [...this.weekdays].sort(), dates: [...this.dates].sort() };
  }

  private isHoliday(date: string): boolean {
    if (!this.holidays) return false;
    return this.holidaysOf(Number(date.slice(0, 4))).has(date);
  }
}

/** Two calendars as one: a day either excludes is excluded (a rule's inline days on top of a named calendar). */
export function unionCalendar(calendars: readonly BusinessCalendar[]): { excludes(day: LocalDay): boolean; empty: boolean } {
  const active = calendars.filter((c) => !c.empty);
  return { excludes: (day) => active.some((c) => c.excludes(day)), empty: active.length === 0 };
}
