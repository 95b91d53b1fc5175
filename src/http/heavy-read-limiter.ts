import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';
import { authenticatedUser } from './security/http-security.js';

/** Heavy reads (SLA pages and reports, history searches) answered at once; the rest wait in line. */
export const HEAVY_READS_AT_ONCE = 2;
/** Heavy reads of one client waiting in line at most; one more of that client is refused with 429 and Retry-After. */
export const HEAVY_READS_QUEUED = 8;
/** Heavy reads waiting in all at most (every client's line together): what a crowd of clients can hold in memory. */
export const HEAVY_READS_QUEUED_IN_ALL = 64;
const RETRY_AFTER_SECONDS = 2;
/**
 * A refusal is answered after this pause, which costs a timer: a client looping on 429s answered at once came
 * straight back, and the refusals alone kept the event loop busy (as the password checks found).
 */
const REFUSAL_PAUSE_MS = 250;

interface Waiting {
  run: () => void;
}

/**
 * The heavy reads of the database (the `/sla` and `/history` pages, `/api/v1/sla/*`, `/api/v1/history/*`): a few at
 * once, whoever asks, so that the polls, the health checks and the scrapes are answered in between (four clients
 * looping the SLA page once stopped polling). The waiting is fair between clients (contract 12a): each client — the
 * authenticated user, or without authentication the address the request came from — has a line of its own, bounded,
 * and a free turn goes to the next client in turn, not to the longest line. One client flooding the port fills its own
 * line and gets 429s; another client's read waits behind at most one read of each other client.
 */
export class HeavyReadLimiter {
  private active = 0;
  /** Each client's line, in the order the clients came: a turn goes round them. */
  private readonly lines = new Map<string, Waiting[]>();
  private waiting = 0;

  constructor(
    private readonly atOnce = HEAVY_READS_AT_ONCE,
    private readonly queued = HEAVY_READS_QUEUED,
    private readonly queuedInAll = HEAVY_READS_QUEUED_IN_ALL,
  ) {}

  /** Run `read` for the client of `req` in its turn, or refuse it at once when that client's line (or all) is full. */
  run<T>(req: IncomingMessage, read: () => Promise<T>): Promise<T> {
    const client = clientOf(req);
    if (this.active < this.atOnce && this.waiting === 0) return this.start(read);
    const line = this.lines.get(client) ?? [];
    if (line.length >= this.queued || this.waiting >= this.queuedInAll) {
      const mine = line.length >= this.queued;
      const refusal = new HttpError(
        429,
        'http_too_many_heavy_reads',
        mine
          ? `too many SLA and history reads of yours waiting (${line.length}); try again in ${RETRY_AFTER_SECONDS} s`
          : `too many SLA and history reads waiting (${this.waiting}, of ${this.lines.size} clients); try again in ${RETRY_AFTER_SECONDS} s`,
        { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      );
      return new Promise((_resolve, reject) => setTimeout(() => reject(refusal), REFUSAL_PAUSE_MS));
    }
    return new Promise<T>((resolve, reject) => {
      line.push({ run: () => void this.start(read).then(resolve, reject) });
      this.lines.set(client, line);
      this.waiting += 1;
    });
  }

  private async start<T>(read: () => Promise<T>): Promise<T> {
    this.active += 1;
    try {
      return await read();
    } finally {
      this.active -= 1;
      this.next();
    }
  }

  /** The next client in turn starts its oldest read; it goes to the end of the round. */
  private next(): void {
    while (this.active < this.atOnce && this.waiting > 0) {
      const [client, line] = this.lines.entries().next().value as [string, Waiting[]];
      this.lines.delete(client);
      const first = line.shift() as Waiting;
      if (line.length > 0) this.lines.set(client, line);
      this.waiting -= 1;
      first.run();
    }
  }
}

/** Who a heavy read is for: the authenticated user, else the address it came from. */
function clientOf(req: IncomingMessage): string {
  const user = authenticatedUser(req);
  return user !== undefined ? `user:${user}` : `address:${req.socket?.remoteAddress ?? 'unknown'}`;
}
