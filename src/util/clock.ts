/**
 * Time is injected everywhere so tests are exact. All internal times are epoch milliseconds UTC;
 * time zones appear only at the edges (cron deadlines, text shown to people).
 */
export interface Clock {
  /** Epoch milliseconds, UTC. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  set(ms: number): void {
    this.current = ms;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * Real time, shifted: `now()` is `startAt` at construction and then moves with the wall clock. The demo runs
 * its simulator and daemon on one, so a 08:00 deadline comes two minutes after start, whatever the hour.
 */
export class ShiftedClock implements Clock {
  /** How far this clock runs ahead of the wall clock (negative: behind). */
  readonly offsetMs: number;

  constructor(startAt: number, wall: () => number = Date.now) {
    this.offsetMs = startAt - wall();
    this.wall = wall;
  }

  private readonly wall: () => number;

  now(): number {
    return this.wall() + this.offsetMs;
  }
}
