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

/**
 * The minute of the last canonical DATAHORA read (`2024-05-01T12:00`) as one number (`202405011200`) and its epoch
 * ms: the records of a page are in time order, dozens to a minute, so most share it and only their seconds need
 * reading. One entry for the process (it has one thread of JavaScript); none before the first.
 */
const lastMinute = { key: -1, ms: 0 };

/**
 * Epoch ms of a DATAHORA already in the canonical form (`2024-05-01T12:00:00.000Z`, which is then its own canonical
 * text), else undefined (another spelling, or not a time: `parseServiceTime` decides). Services send the canonical
 * form almost always: each of its characters is checked and its fields read by arithmetic, so the general parse and
 * the formatting (5% of the client's time over a dense history) are left for the other spellings. A text of the
 * same minute as the one before has its minute compared as a number and only its seconds and milliseconds used
 * (`readRecord` 0.95 → 0.85 µs a record; the number, not `startsWith` on the minute's text: 67 → 26 ns).
 */
export function canonicalServiceTime(text: string): number | undefined {
  if (text.length !== 24) return undefined;
  // Each pair of digits reads -1 when either is not a digit: refused at once, before the minute is compared.
  const century = twoDigitsAt(text, 0);
  const years = twoDigitsAt(text, 2);
  const month = twoDigitsAt(text, 5);
  const day = twoDigitsAt(text, 8);
  const hour = twoDigitsAt(text, 11);
  const minute = twoDigitsAt(text, 14);
  const second = twoDigitsAt(text, 17);
  const millis = threeDigitsAt(text, 20);
  if (century < 0 || years < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || second > 59 || millis < 0) return undefined;
  if (
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    text.charCodeAt(10) !== TEE ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    text.charCodeAt(19) !== DOT ||
    text.charCodeAt(23) !== ZED
  ) {
    return undefined;
  }
  const year = century * 100 + years;
  // Two digits a field, all of them digits: one number per minute text, and the same number only for the same text.
  const key = (((year * 100 + month) * 100 + day) * 100 + hour) * 100 + minute;
  if (key === lastMinute.key) return lastMinute.ms + second * 1000 + millis;
  // Out of range is not a time at all, and the general parse says so too.
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // Date.UTC maps years 0-99 to 1900-1999: those (never seen from a service) take the general path.
  if (year < 100) return undefined;
  lastMinute.ms = Date.UTC(year, month - 1, day, hour, minute);
  lastMinute.key = key;
  return lastMinute.ms + second * 1000 + millis;
}

const DASH = 45;
const TEE = 84;
const COLON = 58;
const DOT = 46;
const ZED = 90;

/** The two digits at `at` as a number, or -1 when either is not a digit. */
function twoDigitsAt(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** The three digits at `at` as a number, or -1 when one is not a digit. */
function threeDigitsAt(text: string, at: number): number {
  const a = twoDigitsAt(text, at);
  const c = text.charCodeAt(at + 2) - 48;
  return a >= 0 && c >= 0 && c <= 9 ? a * 10 + c : -1;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 0;
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
