import { zonedTime } from '../../util/zoned-time.js';

/**
 * Times shown to people always name their zone. The form is `2026-11-22 10:04:05 UTC` in UTC and
 * `2026-11-22 10:04:05 -03:00 (America/Sao_Paulo)` elsewhere: the offset makes the instant unambiguous
 * (abbreviations such as BRT or CST are not), the IANA name says which rules (DST) apply.
 */
export function formatTime(epochMs: number, timeZone: string): string {
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
