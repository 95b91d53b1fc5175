/**
 * Times shown to people always name their zone. The form is `2026-11-22 10:04:05 UTC` in UTC and
 * `2026-11-22 10:04:05 -03:00 (America/Sao_Paulo)` elsewhere: the offset makes the instant unambiguous
 * (abbreviations such as BRT or CST are not), the IANA name says which rules (DST) apply.
 */
export function formatTime(epochMs: number, timeZone: string): string {
  const parts = formatterFor(timeZone).formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  const local = `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
  if (isUtc(timeZone)) return `${local} UTC`;
  // longOffset gives `GMT-03:00`, or bare `GMT` at offset zero.
  const gmt = get('timeZoneName');
  const offset = gmt === 'GMT' ? '+00:00' : gmt.replace(/^GMT/, '');
  return `${local} ${offset} (${timeZone})`;
}

/** Building a DateTimeFormat costs far more than using one (pages list hundreds of times); zones are few. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
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
    // Bounded by the zones in config and rules; the guard only keeps a misuse from growing it without end.
    if (formatters.size < 256) formatters.set(timeZone, f);
  }
  return f;
}

function isUtc(timeZone: string): boolean {
  return ['UTC', 'Etc/UTC', 'Etc/Universal', 'Universal', 'Zulu', 'Etc/Zulu', 'GMT', 'Etc/GMT'].includes(timeZone);
}
