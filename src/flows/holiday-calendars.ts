import { createRequire } from 'node:module';
import type HolidaysType from 'date-holidays';
import { BusinessCalendar } from '../sla/business-calendar.js';
import type { TimeSlice } from '../util/time-slice.js';
import type { CalendarCandidate } from './flow-schedule.js';
import { clockMoves } from './steadiest-zone.js';

/**
 * Calendars inferred from the holiday library (contract 13a): where no configured calendar fits a flow, the weekdays
 * it skipped are matched against the public holidays of every country and region the library knows. The calendars
 * are made lazily and kept: the library's data of every country is tens of MB once parsed, and a daemon whose flows
 * skip no day never loads it.
 */

/** A calendar of the library proposed for a flow: the config lacks it, and the report says what to add. */
export interface InferredCalendar extends CalendarCandidate {
  country: string;
  region?: string;
  /** Its holidays of a year, as local dates (the library's, computed once a year). */
  holidaysOf(year: number): ReadonlySet<string>;
}

function holidayLibrary(): typeof HolidaysType {
  return createRequire(import.meta.url)('date-holidays') as typeof HolidaysType;
}

/** A calendar's name as the config would hold it: `de_sn`, `gb_eng`, `br`. */
export function inferredName(country: string, region?: string): string {
  return (region ? `${country}_${region}` : country).toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

export class HolidayCalendars {
  private countries: string[] | undefined;
  /** Per country its zones (to prefer, among calendars that fit as well, one of the flow's clock). */
  private readonly zones = new Map<string, readonly string[]>();
  private readonly calendars = new Map<string, InferredCalendar>();
  private readonly regions = new Map<string, string[]>();
  /** Deferring: per calendar's name, the years whose holidays `prepare` computed. */
  private readonly readyYears = new Map<string, Set<number>>();
  /** Deferring: the calendars, and their years, that `fitting` lacked since the last `prepare`. */
  private readonly wanted = new Map<string, { country: string; region?: string; years: Set<number> }>();

  /**
   * `defer`: `fitting` makes no calendar itself. It answers from those `prepare` made, passes over the others and
   * remembers them (`pending`), for the caller to `prepare` them in slices and ask again. Making them is a country's
   * rules parsed and its holidays computed, a few ms each and ~200 countries (with their regions, more) at a flow's
   * first skipped days: 1.5–2 s at once, which a daemon's event loop must not spend in one piece (its health check,
   * its polling and every request wait meanwhile). A CLI's one run makes them where it is.
   */
  constructor(
    private readonly library: () => typeof HolidaysType = holidayLibrary,
    private readonly defer = false,
  ) {}

  /** Deferring: whether `fitting` passed over calendars not made yet (then `prepare`, and ask again). */
  get pending(): boolean {
    return this.wanted.size > 0;
  }

  /** Makes the calendars `fitting` lacked, with their holidays and their country's zones, yielding as `slice` says. */
  async prepare(slice: TimeSlice): Promise<void> {
    const wanted = [...this.wanted.entries()];
    this.wanted.clear();
    for (const [name, { country, region, years }] of wanted) {
      const calendar = this.calendar(country, region);
      for (const year of years) calendar.holidaysOf(year);
      if (!region) this.zonesOf(country);
      let ready = this.readyYears.get(name);
      if (!ready) this.readyYears.set(name, (ready = new Set()));
      for (const year of years) ready.add(year);
      if (slice.spent()) await slice.yield();
    }
  }

  /** Not deferring, or this calendar's holidays of `years` are made; else it is wanted (see `defer`). */
  private ready(country: string, region: string | undefined, years: ReadonlySet<number>): boolean {
    if (!this.defer) return true;
    const name = inferredName(country, region);
    const ready = this.readyYears.get(name);
    const missing = [...years].filter((y) => !ready?.has(y));
    if (missing.length === 0) return true;
    let want = this.wanted.get(name);
    if (!want) this.wanted.set(name, (want = { country, ...(region ? { region } : {}), years: new Set() }));
    for (const y of missing) want.years.add(y);
    return false;
  }

  /**
   * The calendars whose public holidays hold at least `min` of the skipped dates: every country's first, then the
   * regions of the countries that hold one of them (a region's calendar is its country's and more), country first.
   */
  fitting(skipped: readonly string[], min: number): InferredCalendar[] {
    if (skipped.length < min) return [];
    const out: InferredCalendar[] = [];
    const hits = (c: InferredCalendar): number => skipped.filter((date) => c.excludes({ date, weekday: new Date(`${date}T00:00:00Z`).getUTCDay() })).length;
    const years = new Set(skipped.map((date) => Number(date.slice(0, 4))));
    for (const country of this.allCountries()) {
      if (!this.ready(country, undefined, years)) continue;
      const national = this.calendar(country);
      const n = hits(national);
      if (n >= min) out.push(national);
      // A region adds its own days to its country's: asked only where the country's explain one of the skipped days
      // already (every country's regions would be 571 calendars to compute, seconds of a daemon's event loop).
      if (n === 0) continue;
      for (const region of this.regionsOf(country)) {
        if (!this.ready(country, region, years)) continue;
        const regional = this.calendar(country, region);
        if (hits(regional) > n) out.push(regional);
      }
    }
    return out;
  }

  /**
   * Of calendars that fit a flow's skipped days alike (Good Friday, Easter Monday and Christmas fit half the world),
   * the one to propose, in order: the only one; the only one of a country keeping the flow's zone (`Europe/Berlin`:
   * DE); of those whose zone keeps the flow's clock over the period (its offset from the flow's zone constant: London
   * for Berlin, not Brisbane — told only when the period held a change of clock that set some apart), the one excusing
   * the fewest days of the year (GB before Jersey, whose Liberation Day nothing in the period showed). Otherwise none.
   */
  pick<C extends CalendarCandidate & { country: string; region?: string }>(alike: readonly C[], zone: string, since: number, until: number): C | undefined {
    if (alike.length <= 1) return alike[0];
    const local = alike.filter((c) => this.zonesOf(c.country).includes(zone));
    if (local.length === 1) return local[0];
    const asked = local.length > 1 ? local : alike;
    const sameClock = asked.filter((c) => this.zonesOf(c.country).some((z) => !clockMoves(zone, z, since, until)));
    if (sameClock.length === 1) return sameClock[0];
    // The clock tells only where it set some apart: a period without a change of clock says nothing of where a
    // flow is, and the fewest days off would then be anyone's.
    if (sameClock.length === 0 || sameClock.length === asked.length) return undefined;
    const year = new Date(until).getUTCFullYear();
    const days = sameClock.map((c) => ({ c, n: this.daysOff(c.country, c.region, year) }));
    const fewest = Math.min(...days.map((d) => d.n));
    const least = days.filter((d) => d.n === fewest);
    return least.length === 1 ? least[0]?.c : undefined;
  }

  private zonesOf(country: string): readonly string[] {
    let zones = this.zones.get(country);
    if (!zones) {
      const Holidays = this.library();
      zones = new Holidays(country).getTimezones() ?? [];
      this.zones.set(country, zones);
    }
    return zones;
  }

  /** Public holidays of a country (or region) in a year. */
  private daysOff(country: string, region: string | undefined, year: number): number {
    return this.calendar(country, region).holidaysOf(year).size;
  }

  private allCountries(): string[] {
    if (!this.countries) {
      const Holidays = this.library();
      this.countries = Object.keys(new Holidays().getCountries() ?? {}).sort();
    }
    return this.countries;
  }

  private regionsOf(country: string): string[] {
    let list = this.regions.get(country);
    if (!list) {
      const Holidays = this.library();
      list = Object.keys(new Holidays().getStates(country) ?? {}).sort();
      this.regions.set(country, list);
    }
    return list;
  }

  private calendar(country: string, region?: string): InferredCalendar {
    const name = inferredName(country, region);
    let c = this.calendars.get(name);
    if (!c) {
      const calendar = new BusinessCalendar({ holidays: { country, ...(region ? { region } : {}), types: ['public'] }, exclude_dates: [], exclude_weekdays: [] });
      c = { name, country, ...(region ? { region } : {}), excludes: (day) => calendar.excludes(day), excludedWeekdays: [], holidaysOf: (year) => calendar.holidaysOf(year) };
      this.calendars.set(name, c);
    }
    return c;
  }
}
