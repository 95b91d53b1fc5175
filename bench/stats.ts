/** Nearest-rank percentile (`p` in 0..100) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

/** The middle value (the lower of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** The run whose `rate` is the median of the runs' (a whole run, so its other figures go with it). */
export function medianRun<T>(runs: readonly T[], rate: (run: T) => number): T {
  const sorted = [...runs].sort((a, b) => rate(a) - rate(b));
  const middle = sorted[Math.ceil(sorted.length / 2) - 1];
  if (middle === undefined) throw new Error('no runs');
  return middle;
}
