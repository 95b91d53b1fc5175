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
