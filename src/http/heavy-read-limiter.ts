import pLimit, { type LimitFunction } from 'p-limit';
import { HttpError } from './http-error.js';

/** Heavy reads (SLA pages and reports, history searches) answered at once; the rest wait in line. */
export const HEAVY_READS_AT_ONCE = 2;
/** Heavy reads waiting in line at most; one more is refused with 429 and Retry-After. */
export const HEAVY_READS_QUEUED = 8;
const RETRY_AFTER_SECONDS = 2;
/**
 * A refusal is answered after this pause, which costs a timer: a client looping on 429s answered at once came
 * straight back, and the refusals alone kept the event loop busy (as the password checks found).
 */
const REFUSAL_PAUSE_MS = 250;

/**
 * The heavy reads of the database (the `/sla` and `/history` pages, `/api/v1/sla/*`, `/api/v1/history/*`) share one
 * line: a few at once, a bounded queue, then 429 with Retry-After. Four clients looping the SLA page kept the
 * database (and, on SQLite, the event loop) busy enough that polling stopped; a line keeps the polls, the health
 * checks and the scrapes answered in between, whatever clients ask for.
 */
export class HeavyReadLimiter {
  private readonly limit: LimitFunction;

  constructor(
    atOnce = HEAVY_READS_AT_ONCE,
    private readonly queued = HEAVY_READS_QUEUED,
  ) {
    this.limit = pLimit(atOnce);
  }

  /** Run `read` in its turn, or refuse it at once when the line is full. */
  run<T>(read: () => Promise<T>): Promise<T> {
    if (this.limit.pendingCount >= this.queued) {
      const refusal = new HttpError(429, 'http_too_many_heavy_reads', `too many SLA and history reads in progress (${this.limit.activeCount} answered, ${this.limit.pendingCount} waiting); try again in ${RETRY_AFTER_SECONDS} s`, {
        'Retry-After': String(RETRY_AFTER_SECONDS),
      });
      return new Promise((_resolve, reject) => setTimeout(() => reject(refusal), REFUSAL_PAUSE_MS));
    }
    return this.limit(read);
  }
}
