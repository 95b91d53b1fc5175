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
