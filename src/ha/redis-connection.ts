import { readFileSync } from 'node:fs';
import type { Redis, RedisOptions } from 'ioredis';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import type { HaConfig } from './ha-schema.js';

/** The Redis URL as it may be shown: scheme, host, port and db, never a user name or password. */
export function redisUrlForDisplay(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return '<invalid redis url>';
  }
}

export interface RedisConnectionOptions {
  /** Connection name shown by CLIENT LIST (the replica). */
  name: string;
  /** Give up a command after this long while disconnected (fail fast: the caller fails open). */
  commandTimeoutMs: number;
}

/**
 * One ioredis connection built from `ha.redis`. Reconnects forever with a capped backoff; while disconnected,
 * commands fail after `commandTimeoutMs` instead of queueing without bound, so callers see Redis as down and
 * fail open (contract section 9). A second connection is needed for subscriptions: call again.
 * ioredis is loaded on first use: a daemon without `ha:` does not carry it (~15 MB of RSS).
 */
export async function createRedis(config: HaConfig['redis'], opts: RedisConnectionOptions): Promise<Redis> {
  const { Redis: RedisClient } = await import('ioredis');
  const tls = config.url.startsWith('rediss:')
    ? { rejectUnauthorized: !config.tls.insecure_skip_verify, ...(config.tls.ca_file ? { ca: readCa(config.tls.ca_file) } : {}) }
    : undefined;
  const options: RedisOptions = {
    connectionName: opts.name,
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    ...(opts.commandTimeoutMs > 0 ? { commandTimeout: opts.commandTimeoutMs } : {}),
    connectTimeout: Math.max(1000, opts.commandTimeoutMs),
    retryStrategy: (times) => Math.min(2_000, 100 * times),
    ...(config.password ? { password: config.password } : {}),
    ...(config.username !== undefined ? { username: config.username } : {}),
    ...(tls ? { tls } : {}),
  };
  return new RedisClient(config.url, options);
}

/** Connect and PING once at start-up; the error names the URL without its password. */
export async function connectRedis(redis: Redis, url: string): Promise<void> {
  // ioredis reports a refused AUTH as an 'error' event and then rejects connect() with "Connection is closed":
  // keep the event's reason, which is the one an operator can act on.
  let refusal: string | undefined;
  const onError = (err: Error): void => {
    if (AUTH_REFUSED.test(err.message)) refusal = err.message;
  };
  redis.on('error', onError);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    const reason = refusal ?? (AUTH_REFUSED.test(errorMessage(err)) ? errorMessage(err) : undefined);
    if (reason !== undefined) {
      throw new TransferWatchError(
        'ha_redis_auth',
        `Redis at ${redisUrlForDisplay(url)} refused the credentials (${scrub(reason, url)}); check ha.redis.password (or password_file) and the user in ha.redis.url`,
      );
    }
    throw new TransferWatchError('ha_redis_unreachable', `cannot reach Redis at ${redisUrlForDisplay(url)}: ${scrub(errorMessage(err), url)}`, {
      cause: undefined,
    });
  } finally {
    redis.off('error', onError);
  }
}

/** Redis's answers to a wrong or missing password (Redis 6+ ACL and the legacy requirepass). */
const AUTH_REFUSED = /WRONGPASS|NOAUTH|invalid password|invalid username-password/i;

function scrub(message: string, url: string): string {
  let out = message;
  try {
    const u = new URL(url);
    for (const secret of [u.password, u.username, url]) if (secret) out = out.split(secret).join('<redacted>');
  } catch {
    /* the URL was validated by the schema */
  }
  return out;
}

function readCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new TransferWatchError('ha_redis_ca_unreadable', `ha.redis.tls.ca_file: cannot read ${file}: ${errorMessage(err)}`);
  }
}

/**
 * What a Redis client error means, in an operator's words: ioredis speaks of its own options ("Reached the max retries
 * per request limit … Refer to "maxRetriesPerRequest" option"), which nobody configures here. The original message is
 * kept after the meaning for the unusual case.
 */
export function redisErrorMessage(err: unknown): string {
  const message = errorMessage(err);
  for (const [pattern, meaning] of REDIS_MEANINGS) if (pattern.test(message)) return `${meaning} (${message.replace(/\s*Refer to .*$/s, '')})`;
  return message;
}

/** A Redis error as a log field: `{ type: 'RedisError', message }`, the message said as `redisErrorMessage` says it. */
export function redisErrorFields(err: unknown): { type: 'RedisError'; message: string } {
  return { type: 'RedisError', message: redisErrorMessage(err) };
}

const REDIS_MEANINGS: ReadonlyArray<readonly [RegExp, string]> = [
  [/max retries per request/i, 'Redis did not answer: the connection was down when the command was sent and still down at its retry'],
  [/Command timed out/i, 'Redis did not answer in time'],
  [/Connection is closed/i, 'the connection to Redis is closed; reconnecting'],
  [/Stream isn't writeable/i, 'not connected to Redis; reconnecting'],
  [/ECONNREFUSED/i, 'Redis refused the connection: is it running at that address?'],
  [/ECONNRESET|EPIPE/i, 'Redis closed the connection'],
  [/ETIMEDOUT/i, 'Redis could not be reached in time'],
  [/ENOTFOUND|EAI_AGAIN/i, "Redis's host name does not resolve"],
  [/LOADING/, 'Redis is loading its data set into memory; commands wait until it is done'],
  [/READONLY/, 'this Redis is a read-only replica: ha.redis.url must name the primary'],
  [/OOM command not allowed/i, 'Redis is out of memory (maxmemory reached)'],
];
