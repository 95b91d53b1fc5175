/**
 * Delay before the next attempt of a failed send: exponential backoff with jitter, never shorter than
 * what the receiver asked for with `Retry-After`. Pure, so tests can check it exactly with a fixed random.
 */
export interface BackoffOptions {
  baseMs: number;
  factor: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1_000, factor: 2, maxMs: 5 * 60_000 };

/**
 * @param failures how many attempts have failed so far (1 after the first failure)
 * @param random a number in [0, 1); "equal jitter" keeps the delay in [d/2, d) so retries of many
 *   notifications spread out without ever retrying immediately
 */
export function retryDelay(
  failures: number,
  random: () => number,
  retryAfterMs?: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
): number {
  const exp = Math.min(options.maxMs, options.baseMs * options.factor ** Math.max(0, failures - 1));
  const jittered = Math.round(exp / 2 + (random() * exp) / 2);
  return Math.max(jittered, retryAfterMs !== undefined && Number.isFinite(retryAfterMs) ? Math.max(0, retryAfterMs) : 0);
}
