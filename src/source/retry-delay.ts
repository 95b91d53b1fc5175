import { retryDelay, type BackoffOptions } from '../base/backoff.js';

/** The source client's backoff: from 500 ms, doubling, capped at 30 s (a poll cycle must not stall for long). */
export const SOURCE_BACKOFF: BackoffOptions = { baseMs: 500, factor: 2, maxMs: 30_000 };

/**
 * Backoff before retry number `attempt` (1 = the first retry), with "equal jitter" so many sources failing
 * together do not retry in step, never sooner than a server's Retry-After. The same function the notification
 * retrier uses (util/backoff.ts), with the source's bounds. Pure apart from `random`, which tests can pin.
 */
export function defaultRetryDelay(attempt: number, retryAfterMs?: number, random: () => number = Math.random): number {
  return retryDelay(attempt, random, retryAfterMs, SOURCE_BACKOFF);
}
