import { zonedTime } from './zoned-time.js';

/**
 * The one form of a time shown to people (messages, rule annotations, the status page, the CLI): it always
 * names its zone. `2026-11-22 10:04:05 UTC` in UTC and `2026-11-22 10:04:05 -03:00 (America/Sao_Paulo)`
 * elsewhere: the offset makes the instant unambiguous (abbreviations such as BRT or CST are not), the IANA name
 * says which rules (DST) apply.
 */
export function formatTime(epochMs: number, timeZone: string): string {
  // Evaluations format the same few instants (now, window starts, deadlines) for every rule and alert.
  let memo = formattedTimes.get(timeZone);
  if (!memo) formattedTimes.set(timeZone, (memo = new Map()));
  let text = memo.get(epochMs);
  if (text === undefined) {
    text = format(epochMs, timeZone);
    if (memo.size >= MAX_FORMATTED_PER_ZONE) memo.clear();
    memo.set(epochMs, text);
  }
  return text;
}

/** Recently formatted instants per zone; cleared when full, so bounded whatever the times asked for. */
const formattedTimes = new Map<string, Map<number, string>>();
const MAX_FORMATTED_PER_ZONE = 1024;

function format(epochMs: number, timeZone: string): string {
  const t = zonedTime(epochMs, timeZone);
  const local = `${t.year}-${t.month}-${t.day} ${t.hour}:${t.minute}:${t.second}`;
  if (isUtc(timeZone)) return `${local} UTC`;
  // longOffset gives `GMT-03:00`, or bare `GMT` at offset zero.
  const offset = t.gmtOffset === 'GMT' ? '+00:00' : t.gmtOffset.replace(/^GMT/, '');
  return `${local} ${offset} (${timeZone})`;
}

function isUtc(timeZone: string): boolean {
  return ['UTC', 'Etc/UTC', 'Etc/Universal', 'Universal', 'Zulu', 'Etc/Zulu', 'GMT', 'Etc/GMT'].includes(timeZone);
}

/**
 * RFC 3339 with the zone's offset of that instant (`2026-03-08T08:00:00-03:00`, `Z` at offset zero): an instant
 * written in the zone it was expected in, for APIs and CSV. `millis`: with its milliseconds
 * (`2026-11-25T09:00:44.123-03:00`), for evidence a partner may dispute to the second.
 */
export function formatRfc3339(epochMs: number, timeZone: string, opts: { millis?: boolean } = {}): string {
  const t = zonedTime(epochMs, timeZone);
  const offset = t.gmtOffset === 'GMT' || t.gmtOffset === 'GMT+00:00' ? 'Z' : t.gmtOffset.replace(/^GMT/, '');
  const millis = opts.millis ? millisPart(epochMs) : '';
  return `${t.year}-${t.month}-${t.day}T${t.hour}:${t.minute}:${t.second}${millis}${offset}`;
}

/**
 * A table cell's time (the CLI's tables), whose column header names the zone: `2026-11-22 10:04:05` in UTC, and
 * `2026-11-22 07:04:05 -03:00` elsewhere (the offset tells the two 01:30 of a DST change apart). `millis`: with its
 * milliseconds (`07:04:05.123`), for evidence a partner may dispute to the second.
 */
export function formatCellTime(epochMs: number, timeZone: string, opts: { millis?: boolean } = {}): string {
  const t = zonedTime(epochMs, timeZone);
  const millis = opts.millis ? millisPart(epochMs) : '';
  const local = `${t.year}-${t.month}-${t.day} ${t.hour}:${t.minute}:${t.second}${millis}`;
  if (isUtc(timeZone)) return local;
  return `${local} ${t.gmtOffset === 'GMT' ? '+00:00' : t.gmtOffset.replace(/^GMT/, '')}`;
}

/** The local date (`YYYY-MM-DD`) of an instant in a zone. */
export function localDateIn(epochMs: number, timeZone: string): string {
  const t = zonedTime(epochMs, timeZone);
  return `${t.year}-${t.month}-${t.day}`;
}

/** `.123`: an instant's milliseconds (of a negative epoch too). */
function millisPart(epochMs: number): string {
  return `.${String(((epochMs % 1000) + 1000) % 1000).padStart(3, '0')}`;
}
