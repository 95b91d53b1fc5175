import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Long synchronous work cut into slices of about `budgetMs`, with a turn of the event loop between them.
 *
 * Why: a catch-up reads pages of 1,000 records and hands each to every rule; one page and one batch of the rules
 * each held the event loop 20–60 ms, and a `GET /metrics` or `/healthz` that arrived meanwhile waited for both
 * (a scrape during a backfill: p99 ~100 ms, where Prometheus users expect tens). Yielding every few ms lets the
 * HTTP server answer in between; the cost is one `setImmediate` per slice, nothing per record.
 *
 * The clock is read every `checkEvery` calls only: `performance.now()` per record would be measurable.
 */
export class TimeSlice {
  private started: number;
  private calls = 0;

  constructor(
    private readonly budgetMs = 8,
    private readonly now: () => number = () => performance.now(),
    private readonly checkEvery = 32,
  ) {
    this.started = now();
  }

  /** True when the slice is spent: the caller should `await yield()` before going on. */
  spent(): boolean {
    if (++this.calls < this.checkEvery) return false;
    this.calls = 0;
    return this.now() - this.started >= this.budgetMs;
  }

  /** A turn of the event loop (timers, I/O, other requests), then a new slice. */
  async yield(): Promise<void> {
    await nextTurn();
    this.calls = 0;
    this.started = this.now();
  }
}
