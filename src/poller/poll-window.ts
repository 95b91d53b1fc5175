/**
 * Which slice of history a stream reads next. Pure, so the catch-up and overlap rules are tested exactly.
 *
 * A window is [start, end] in epoch ms, both inclusive (the service's `start`/`end`):
 * - it ends at `now - delay` (records arrive late), and at most `maxWindow` after the cursor (catch-up after
 *   downtime proceeds in bounded steps);
 * - it starts `overlap` before the cursor, so records that arrived late inside the previous window are seen;
 *   repeats are recognised by identity downstream;
 * - with no cursor (first start) it begins `initialLookback` before the end.
 * The cursor moves to the window's end only when the whole window was read.
 */
export interface WindowSettings {
  delay: number;
  overlap: number;
  maxWindow: number;
  initialLookback: number;
}

export interface PollWindow {
  start: number;
  end: number;
  /** True when the window reaches `now - delay`: no further window is due this cycle. */
  caughtUp: boolean;
}

export function nextWindow(cursor: number | undefined, now: number, s: WindowSettings): PollWindow | undefined {
  const horizon = now - s.delay;
  const base = cursor ?? horizon - s.initialLookback;
  if (horizon <= base) return undefined;
  const end = Math.min(horizon, base + s.maxWindow);
  const start = Math.max(0, base - s.overlap);
  return { start, end, caughtUp: end === horizon };
}
