/**
 * Lookups in a sorted list of times (epoch ms) by bisection: a rule's arrivals and the SLA ledger's judgement count
 * them without walking them, and a cron schedule finds its runs around a time (src/rules/sorted-times.ts has the same
 * for lists of objects with a time).
 */

/** Index of the first time after `time` in a sorted list of times (binary search). */
export function indexAfter(times: readonly number[], time: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) <= time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many times of a sorted list are in (from, to]. */
export function timesIn(times: readonly number[], from: number, to: number): number {
  return Math.max(0, indexAfter(times, to) - indexAfter(times, from));
}
