import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import bcrypt from 'bcryptjs';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from '../../util/logger.js';
import { HttpError } from '../http-error.js';

/** A verified user/password pair is trusted this long without another bcrypt round (a scrape every 15 s costs none). */
const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX = 1_000;
/** Failures from one peer before its answers are slowed down, and the cap of the delay. */
const FREE_FAILURES = 3;
const MAX_DELAY_MS = 5_000;
const FAILURE_MEMORY_MS = 15 * 60_000;
/**
 * bcrypt rounds run one at a time, whoever asks, with at most MAX_QUEUED_CHECKS waiting and MAX_CHECKS_PER_PEER
 * of one peer in progress or waiting: 100 keep-alive connections guessing passwords made a bcrypt round per
 * guess in parallel, `/healthz` took 10 s and polling halved. Over those bounds the answer is 429, after
 * OVERLOAD_PAUSE_MS (a guesser answered at once came straight back).
 */
const MAX_CONCURRENT_CHECKS = 1;
const MAX_QUEUED_CHECKS = 16;
const MAX_CHECKS_PER_PEER = 2;
/** How long a request refused for too many checks waits before its 429. */
const OVERLOAD_PAUSE_MS = 1_000;
/** A pair that failed is answered from memory for this long (a client retrying a wrong password costs nothing). */
const FAILED_TTL_MS = 5 * 60_000;
/** Compared against when the user is unknown, so a wrong user costs as long as a wrong password. */
const DUMMY_HASH = '$2b$10$CwTycUXWue0Thq9StjUM0uJ8DHgP2Yt1eEYxbFzr4sLt2b6GSjCWO';

export interface BasicAuthHooks {
  onFailure?(): void;
}

/**
 * HTTP basic auth against bcrypt hashes (exporter-toolkit's `basic_auth_users`), verified with bcryptjs. A
 * successful pair is remembered (as a SHA-256 of user, password and hash, never the password itself) for a few
 * minutes, so Prometheus scraping every few seconds does not pay a bcrypt round each time. Failures are logged
 * with the user name and the peer, never the password, and a peer that keeps failing is answered more slowly.
 */
export class BasicAuthenticator {
  private readonly verified = new Map<string, number>();
  /** Pairs (hashed as in `verified`) known to be wrong, until when. */
  private readonly refused = new Map<string, number>();
  private readonly failures = new Map<string, { count: number; last: number }>();
  private readonly checks: LimitFunction = pLimit(MAX_CONCURRENT_CHECKS);
  private readonly checksByPeer = new Map<string, number>();

  constructor(
    private readonly users: Readonly<Record<string, string>>,
    private readonly logger: Logger,
    private readonly hooks: BasicAuthHooks = {},
    private readonly now: () => number = Date.now,
  ) {}

  /** The authenticated user name; throws 401 (with a challenge) otherwise. */
  async authenticate(req: IncomingMessage, peer: string): Promise<string> {
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) {
      // Counted (a scraper that lost its credentials shows up in the metric); not logged: every browser's first
      // request has none, and the challenge is what makes it ask.
      this.hooks.onFailure?.();
      throw challenge('authentication required');
    }
    const { user, password } = credentials;
    const hash = this.users[user];
    const key = createHash('sha256').update(`${user}\u0000${password}\u0000${hash ?? ''}`).digest('hex');
    const now = this.now();
    const until = this.verified.get(key);
    if (hash !== undefined && until !== undefined && until > now) return user;
    const refusedUntil = this.refused.get(key);
    if (refusedUntil !== undefined && refusedUntil > now) {
      await this.penalty(peer);
      this.fail(user, peer);
      throw challenge('wrong user name or password');
    }
    const ok = await this.check(password, hash, peer);
    if (ok) {
      if (this.verified.size >= CACHE_MAX) this.verified.clear();
      this.verified.set(key, this.now() + CACHE_TTL_MS);
      this.failures.delete(peer);
      return user;
    }
    if (this.refused.size >= CACHE_MAX) this.refused.clear();
    this.refused.set(key, this.now() + FAILED_TTL_MS);
    this.fail(user, peer);
    throw challenge('wrong user name or password');
  }

  /** One bcrypt round, in the bounded queue; a peer that kept failing waits its delay first. */
  private async check(password: string, hash: string | undefined, peer: string): Promise<boolean> {
    const mine = this.checksByPeer.get(peer) ?? 0;
    if (mine >= MAX_CHECKS_PER_PEER || this.checks.pendingCount >= MAX_QUEUED_CHECKS) {
      this.hooks.onFailure?.();
      // Answered after a pause that costs a timer: a guesser answered at once came straight back, thousands of
      // times a second, and its 429s alone kept the event loop busy.
      await new Promise((r) => setTimeout(r, OVERLOAD_PAUSE_MS));
      throw new HttpError(429, 'http_too_many_auth_checks', 'too many password checks in progress; try again later', { 'Retry-After': '1' });
    }
    this.checksByPeer.set(peer, mine + 1);
    try {
      await this.penalty(peer);
      // bcrypt even for unknown users: the answer's time must not tell which user names exist.
      return await this.checks(async () => (await bcrypt.compare(password, hash ?? DUMMY_HASH)) && hash !== undefined);
    } finally {
      const left = (this.checksByPeer.get(peer) ?? 1) - 1;
      if (left <= 0) this.checksByPeer.delete(peer);
      else this.checksByPeer.set(peer, left);
    }
  }

  /** A peer past its free failures waits before its next check: guessing slows down, and costs no CPU while it waits. */
  private async penalty(peer: string): Promise<void> {
    const before = this.failures.get(peer);
    if (!before || this.now() - before.last >= FAILURE_MEMORY_MS || before.count < FREE_FAILURES) return;
    const delay = Math.min(MAX_DELAY_MS, 250 * 2 ** (before.count - FREE_FAILURES));
    await new Promise((r) => setTimeout(r, delay));
  }

  private fail(user: string, peer: string): void {
    const now = this.now();
    const before = this.failures.get(peer);
    const count = before && now - before.last < FAILURE_MEMORY_MS ? before.count + 1 : 1;
    this.failures.set(peer, { count, last: now });
    if (this.failures.size > 10_000) this.failures.clear();
    this.hooks.onFailure?.();
    this.logger.warn({ user, peer, failures: count }, 'HTTP authentication failed');
  }
}

function challenge(message: string): HttpError {
  return new HttpError(401, 'http_unauthorized', message, { 'WWW-Authenticate': 'Basic realm="transfer-watch", charset="UTF-8"' });
}

function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  if (!header?.toLowerCase().startsWith('basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0) return undefined;
  return { user: decoded.slice(0, i), password: decoded.slice(i + 1) };
}
