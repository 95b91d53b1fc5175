/**
 * DATAHORA parsing. The interface promises ISO 8601 UTC, but services behind it have been seen sending
 * local-looking times without a zone, a space instead of `T`, and offsets without a colon. A time without
 * a zone is UTC (contract section 8). Anything that is not a real calendar instant is refused rather than
 * guessed (Date.parse would roll 2024-02-30 over to March).
 */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Epoch ms for an ISO 8601 date-time, or undefined when it is not one. */
export function parseServiceTime(text: string): number | undefined {
  const m = ISO_TIME.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  const offset = zoneOffsetMinutes(m[8]);
  if (offset === undefined) return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offset * 60_000;
  return Number.isFinite(utc) ? utc : undefined;
}

/** Canonical form: `2024-05-01T12:00:00.000Z`. */
export function formatServiceTime(ms: number): string {
  return new Date(ms).toISOString();
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function zoneOffsetMinutes(zone: string | undefined): number | undefined {
  if (zone === undefined || zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}
