import { createRequire } from 'node:module';
import type HolidaysType from 'date-holidays';
import type { CalendarConfig } from './business-calendar.js';

/** Days named in a warning at most; more are counted. */
const DAYS_NAMED = 6;
/** Regions named per day at most. */
const REGIONS_NAMED = 4;

/** A holiday some regions of a country keep and the country as a whole does not. */
export interface RegionalDay {
  date: string;
  name: string;
  /** The library's codes of the regions that keep it, sorted. */
  regions: string[];
}

/**
 * The holidays of `year` of the counted types that regions of the calendar's country keep and the country without a
 * region does not: what a calendar of `country: GB` and no region leaves out (England's Summer bank holiday, Scotland's
 * 2 January). None for a calendar with a region, without holidays, or of a country without regions.
 */
export function regionalDaysLeftOut(calendar: CalendarConfig, year: number): RegionalDay[] {
  const h = calendar.holidays;
  if (!h || h.region !== undefined) return [];
  const Holidays = createRequire(import.meta.url)('date-holidays') as typeof HolidaysType;
  const regions = Object.keys(new Holidays().getStates(h.country) ?? {});
  if (regions.length === 0) return [];
  const types = new Set<string>(h.types);
  const daysOf = (hd: HolidaysType): Map<string, string> => {
    const out = new Map<string, string>();
    for (const d of hd.getHolidays(year) || []) if (types.has(d.type)) out.set(d.date.slice(0, 10), d.name);
    return out;
  };
  const national = daysOf(new Holidays(h.country));
  const left = new Map<string, RegionalDay>();
  for (const region of regions) {
    for (const [date, name] of daysOf(new Holidays(h.country, region))) {
      if (national.has(date)) continue;
      const id = `${date}\u0000${name}`;
      const day = left.get(id);
      if (day) day.regions.push(region);
      else left.set(id, { date, name, regions: [region] });
    }
  }
  return [...left.values()].map((d) => ({ ...d, regions: d.regions.sort() })).sort((a, b) => a.date.localeCompare(b.date) || a.name.localeCompare(b.name));
}

/**
 * `check`'s warning for a calendar of a country with regional holidays and no region (contract 11c: a day nobody
 * configured is `missing`, so a partner's regional holiday would count against it): the days it leaves out, and the
 * regions to choose from. Undefined when it leaves none out.
 */
export function regionalHolidaysWarning(what: string, calendar: CalendarConfig, year: number): string | undefined {
  const days = regionalDaysLeftOut(calendar, year);
  const country = calendar.holidays?.country;
  if (days.length === 0 || country === undefined) return undefined;
  const all = [...new Set(days.flatMap((d) => d.regions))].sort();
  const regions = all.length > 12 ? `${all.slice(0, 12).join(', ')}, … (${all.length} regions)` : all.join(', ');
  const named = days.slice(0, DAYS_NAMED).map((d) => {
    const who = d.regions.length > REGIONS_NAMED ? `${d.regions.slice(0, REGIONS_NAMED).join(', ')} and ${d.regions.length - REGIONS_NAMED} more` : d.regions.join(', ');
    return `${d.date} ${d.name} (${who})`;
  });
  const more = days.length > DAYS_NAMED ? `, and ${days.length - DAYS_NAMED} more` : '';
  return (
    `${what}: holidays of ${country} without a region leave out ${days.length} regional day${days.length === 1 ? '' : 's'} of ${year}: ${named.join('; ')}${more}. ` +
    `A file is then expected on them, and one that does not come is missing. Set holidays.region to one of ${regions} (transfer-watch calendar show lists a year)`
  );
}
