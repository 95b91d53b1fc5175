import { describe, expect, it } from 'vitest';
import { nextWindow } from '../../src/poller/poll-window.js';

const s = { delay: 30_000, overlap: 120_000, maxWindow: 3_600_000, initialLookback: 3_600_000 };
const now = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('nextWindow', () => {
  it('starts initial_lookback before now - delay on a first start, minus the overlap', () => {
    const w = nextWindow(undefined, now, s);
    expect(w).toEqual({ start: now - 30_000 - 3_600_000 - 120_000, end: now - 30_000, caughtUp: true });
  });

  it('starts overlap before the cursor and ends at now - delay', () => {
    const cursor = now - 60_000;
    expect(nextWindow(cursor, now, s)).toEqual({ start: cursor - 120_000, end: now - 30_000, caughtUp: true });
  });

  it('catches up after downtime in steps of at most max_window', () => {
    const cursor = now - 5 * 3_600_000;
    const w = nextWindow(cursor, now, s);
    expect(w).toEqual({ start: cursor - 120_000, end: cursor + 3_600_000, caughtUp: false });
  });

  it('has nothing to read when the cursor is at the horizon', () => {
    expect(nextWindow(now - 30_000, now, s)).toBeUndefined();
  });
});
