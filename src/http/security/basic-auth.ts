import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import bcrypt from 'bcryptjs';
import type { Logger } from '../../util/logger.js';
import { HttpError } from '../http-error.js';

/** A verified user/password pair is trusted this long without another bcrypt round (a scrape every 15 s costs none). */
const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX = 1_000;
/** Failures from one peer before its answers are slowed down, and the cap of the delay. */
const FREE_FAILURES = 3;
const MAX_DELAY_MS = 5_000;
const FAILURE_MEMORY_MS = 15 * 60_000;
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
  private readonly failures = new Map<string, { count: number; last: number }>();

  constructor(
    private readonly users: Readonly<Record<string, string>>,
    private readonly logger: Logger,
    private readonly hooks: BasicAuthHooks = {},
    private readonly now: () => number = Date.now,
  ) {}

  /** The authenticated user name; throws 401 (with a challenge) otherwise. */
  async authenticate(req: IncomingMessage, peer: string): Promise<string> {
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) throw challenge('authentication required');
    const { user, password } = credentials;
    const hash = this.users[user];
    const key = createHash('sha256').update(`${user}\u0000${password}\u0000${hash ?? ''}`).digest('hex');
    const until = this.verified.get(key);
    if (hash !== undefined && until !== undefined && until > this.now()) return user;
    // bcrypt even for unknown users: the answer's time must not tell which user names exist.
    const ok = (await bcrypt.compare(password, hash ?? DUMMY_HASH)) && hash !== undefined;
    if (ok) {
      if (this.verified.size >= CACHE_MAX) this.verified.clear();
      this.verified.set(key, this.now() + CACHE_TTL_MS);
      this.failures.delete(peer);
      return user;
    }
    await this.fail(user, peer);
    throw challenge('wrong user name or password');
  }

  private async fail(user: string, peer: string): Promise<void> {
    const now = this.now();
    const before = this.failures.get(peer);
    const count = before && now - before.last < FAILURE_MEMORY_MS ? before.count + 1 : 1;
    this.failures.set(peer, { count, last: now });
    if (this.failures.size > 10_000) this.failures.clear();
    this.hooks.onFailure?.();
    this.logger.warn({ user, peer, failures: count }, 'HTTP authentication failed');
    if (count > FREE_FAILURES) {
      const delay = Math.min(MAX_DELAY_MS, 250 * 2 ** (count - FREE_FAILURES - 1));
      await new Promise((r) => setTimeout(r, delay));
    }
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
