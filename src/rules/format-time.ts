/**
 * Times shown to people always name their zone: `2026-11-20 08:00 America/Sao_Paulo (UTC-03:00)`.
 */
export function formatTimeInZone(ms: number, timeZone: string): string {
  // Evaluations format the same few instants (now, window starts, deadlines) for every rule and alert.
  let memo = formattedTimes.get(timeZone);
  if (!memo) formattedTimes.set(timeZone, (memo = new Map()));
  let text = memo.get(ms);
  if (text === undefined) {
    text = format(ms, timeZone);
    if (memo.size >= MAX_FORMATTED_PER_ZONE) memo.clear();
    memo.set(ms, text);
  }
  return text;
}

/** Recently formatted instants per zone; cleared when full, so bounded whatever the times asked for. */
const formattedTimes = new Map<string, Map<number, string>>();
const MAX_FORMATTED_PER_ZONE = 1024;

function format(ms: number, timeZone: string): string {
  const parts = zoneFormatter(timeZone).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const seconds = get('second') === '00' ? '' : `:${get('second')}`;
  const offset = get('timeZoneName').replace('GMT', 'UTC') || 'UTC';
  const zone = timeZone === 'UTC' ? 'UTC' : `${timeZone} (${offset === 'UTC' ? 'UTC+00:00' : offset})`;
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}${seconds} ${zone}`;
}

/**
 * Building an Intl.DateTimeFormat costs ~100x formatting with one, and rules format times for every alert at
 * every evaluation (the bench measured it as a fifth of the pipeline). Formatters are immutable, and zones few
 * (those named in the config), so one per zone is kept for the life of the process.
 */
const zoneFormatters = new Map<string, Intl.DateTimeFormat>();

function zoneFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = zoneFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', {
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
    zoneFormatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The calendar date (`YYYY-MM-DD`) and weekday (0 = Sunday) of an instant in a zone. */
export function localDate(ms: number, timeZone: string, formatter = localDateFormatter(timeZone)): { date: string; weekday: number } {
  const parts = formatter.formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday'));
  return { date: `${get('year')}-${get('month')}-${get('day')}`, weekday };
}

/** Building a formatter is the costly part of `localDate`; callers on a hot path keep one per zone. */
export function localDateFormatter(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', weekday: 'short' });
}
