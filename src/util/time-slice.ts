import { setImmediate } from 'node:timers';

/**
 * The event loop of one process, shared by its long jobs (the pollers' page reads, the leader's reading of the
 * transfer stream, rule evaluations, a backfill): each works in slices of about `budgetMs` and, when one is spent,
 * waits for its turn; **one waiting job is resumed per turn of the event loop**, oldest first, with a fresh slice.
 *
 * Why shared, not one budget per job: with a budget of their own, four jobs that yielded in the same turn were
 * all resumed in the next, one after another, and held the loop 4 × 8 ms between two looks at the sockets (a
 * scrape during a backfill waited that long before it was even read). With one turn each, the HTTP server is
 * served after every slice, whatever the number of jobs. One share per process (the daemon makes it and hands it
 * to every role, on a single node as in a cluster); a job given none gets a share of its own (the old behaviour).
 *
 * Work started by I/O (a page that just arrived) runs on the slice of the last turn: when that is spent, it waits
 * for a turn after a few records (`checkEvery`) rather than adding a slice of its own to the current one.
 */
export class EventLoopShare {
  private turnStartedAt: number;
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  constructor(
    readonly budgetMs = 8,
    readonly now: () => number = () => performance.now(),
    /**
     * Runs `fn` at the next turn of the event loop (after the sockets have been looked at). node:timers' own
     * setImmediate, so that a test's fake timers (which replace the global one) do not stop the daemon's work.
     */
    private readonly nextTurn: (fn: () => void) => void = (fn) => void setImmediate(fn),
  ) {
    this.turnStartedAt = now();
  }

  /** True when this turn's slice is used up. */
  spent(): boolean {
    return this.now() - this.turnStartedAt >= this.budgetMs;
  }

  /** Resolves at the caller's turn of the event loop, with a fresh slice. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** Jobs waiting for a turn. */
  get waitingJobs(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.nextTurn(() => this.resumeNext());
  }

  private resumeNext(): void {
    this.scheduled = false;
    const resume = this.waiting.shift();
    // The others wait for the next turn: scheduled from inside this one, so sockets are served in between.
    if (this.waiting.length > 0) this.schedule();
    this.turnStartedAt = this.now();
    resume?.();
  }
}

/**
 * One job's view of the shared loop: `spent()` cheaply (the clock is read every `checkEvery` calls only:
 * `performance.now()` per record would be measurable), `yield()` to wait for the next turn.
 */
export class TimeSlice {
  private calls = 0;

  constructor(
    private readonly share: EventLoopShare = new EventLoopShare(),
    private readonly checkEvery = 32,
  ) {}

  /** True when the slice is spent: the caller should `await yield()` before going on. */
  spent(): boolean {
    if (++this.calls < this.checkEvery) return false;
    this.calls = 0;
    return this.share.spent();
  }

  /** A turn of the event loop (timers, I/O, other requests, other jobs' slices), then a new slice. */
  async yield(): Promise<void> {
    this.calls = 0;
    await this.share.turn();
  }
}
