import type { Clock } from '../util/clock.js';

/**
 * `Retry-After` as milliseconds from now: either delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable; never negative. Read by the source client and the notifiers alike.
 */
export function parseRetryAfter(value: unknown, clock: Clock): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string' || text.trim() === '') return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - clock.now());
}
