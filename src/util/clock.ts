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
