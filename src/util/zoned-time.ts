/** The wall-clock fields of an instant in a time zone, as Intl spells them (two digits each, the year four). */
export interface ZonedTime {
  year: string;
  month: string;
  day: string;
  /** 00–23 (never 24 at midnight). */
  hour: string;
  minute: string;
  second: string;
  /** Intl's `longOffset`: `GMT-03:00`; at offset zero `GMT+00:00` or bare `GMT`, as the ICU data has it. */
  gmtOffset: string;
}

/**
 * The wall-clock fields of `ms` in `timeZone`. The rules' and the notification templates' time formats differ,
 * but both are built from these fields; only the spelling around them is theirs.
 */
export function zonedTime(ms: number, timeZone: string): ZonedTime {
  // The zone's offset is the same all day on every day but those of a change (DST, a new standard time): kept per
  // UTC day, the fields are arithmetic on it — Intl's formatToParts costs ~10 µs, and a page of 5,000 occurrences
  // formats 15,000 instants. A day whose offset changes is asked of Intl instant by instant.
  const day = Math.floor(ms / DAY_MS);
  const offset = dayOffset(day, timeZone);
  if (offset !== null) {
    const local = new Date(ms + offset.offsetMs);
    const year = local.getUTCFullYear();
    if (year >= 1000 && year <= 9999) {
      return {
        year: String(year),
        month: two(local.getUTCMonth() + 1),
        day: two(local.getUTCDate()),
        hour: two(local.getUTCHours()),
        minute: two(local.getUTCMinutes()),
        second: two(local.getUTCSeconds()),
        gmtOffset: offset.gmtOffset,
      };
    }
  }
  return intlZonedTime(ms, timeZone);
}

const DAY_MS = 86_400_000;
const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Per zone, per UTC day: its offset all day, or null on a day it changes. Cleared when full (bounded). */
const dayOffsets = new Map<string, Map<number, { offsetMs: number; gmtOffset: string } | null>>();
const MAX_DAYS_PER_ZONE = 8_192;

function dayOffset(day: number, timeZone: string): { offsetMs: number; gmtOffset: string } | null {
  let days = dayOffsets.get(timeZone);
  if (!days) {
    days = new Map();
    if (dayOffsets.size < MAX_ZONES) dayOffsets.set(timeZone, days);
  }
  let offset = days.get(day);
  if (offset === undefined) {
    const first = day * DAY_MS;
    const last = first + DAY_MS - 1_000;
    const a = intlZonedTime(first, timeZone);
    const b = intlZonedTime(last, timeZone);
    const offsetA = offsetMsOf(a, first);
    offset = offsetA === offsetMsOf(b, last) && a.gmtOffset === b.gmtOffset ? { offsetMs: offsetA, gmtOffset: a.gmtOffset } : null;
    if (days.size >= MAX_DAYS_PER_ZONE) days.clear();
    days.set(day, offset);
  }
  return offset;
}

/** A zone's offset from UTC at an instant, in ms (local wall-clock minus UTC). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  return offsetMsOf(zonedTime(ms, timeZone), ms);
}

/** Local wall-clock minus UTC, in ms, of an instant (whole seconds: Intl's fields have no milliseconds). */
function offsetMsOf(t: ZonedTime, ms: number): number {
  return Date.UTC(Number(t.year), Number(t.month) - 1, Number(t.day), Number(t.hour), Number(t.minute), Number(t.second)) - Math.floor(ms / 1_000) * 1_000;
}

function intlZonedTime(ms: number, timeZone: string): ZonedTime {
  const parts = formatterFor(timeZone).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
    gmtOffset: get('timeZoneName'),
  };
}

/**
 * Building an Intl.DateTimeFormat costs ~100x formatting with one, and times are formatted for every alert at
 * every evaluation and for every line of a status page. Formatters are immutable and zones few (those named in
 * the config and rules), so one per zone is kept for the life of the process.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
/** Only keeps a misuse (zones from untrusted input) from growing the cache without end. */
const MAX_ZONES = 256;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    });
    if (formatters.size < MAX_ZONES) formatters.set(timeZone, formatter);
  }
  return formatter;
}
