import { zonedTime } from '../util/zoned-time.js';

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
  const t = zonedTime(ms, timeZone);
  const seconds = t.second === '00' ? '' : `:${t.second}`;
  const offset = t.gmtOffset.replace('GMT', 'UTC') || 'UTC';
  const zone = timeZone === 'UTC' ? 'UTC' : `${timeZone} (${offset === 'UTC' ? 'UTC+00:00' : offset})`;
  return `${t.year}-${t.month}-${t.day} ${t.hour}:${t.minute}${seconds} ${zone}`;
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
