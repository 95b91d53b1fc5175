/**
 * Backoff before retry number `attempt` (1 = the first retry): exponential from 500 ms, capped at 30 s,
 * with "equal jitter" (half fixed, half random) so many sources failing together do not retry in step.
 * A server's Retry-After wins when it is given, since the server knows when it will be back.
 * Pure apart from `random`, which tests can pin.
 */
export function defaultRetryDelay(attempt: number, retryAfterMs?: number, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0) return retryAfterMs;
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (base / 2) * random());
}
