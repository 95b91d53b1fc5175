import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { RedisStateStore } from '../../src/ha/redis-state-store.js';
import { SilenceStore } from '../../src/notify/mute/silence-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';
import { HAVE_REDIS, REDIS_SERVER, RedisServer } from '../helpers/redis-server.js';

if (!HAVE_REDIS && process.env['CI'] === 'true') throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);

describe.skipIf(!HAVE_REDIS)('RedisStateStore with corrupt keys', () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis.disconnect();
    await server.kill();
  });

  it('moves a key that is not JSON aside under quarantine:, says so, and reads as absent (alerts, outbox)', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (s: string) => void lines.push(s) } });
    const store = new RedisStateStore({ redis, prefix: 'q1:', logger });
    await redis.set('q1:state:alerts', '\u0000garbage{{{');
    await redis.set('q1:state:outbox', 'not json either');
    const alerts = new AlertStore({ clock: new ManualClock(0), logger: silentLogger(), state: store });
    await alerts.restore();
    expect(alerts.alerts()).toEqual([]);
    expect(await store.load('outbox')).toBeUndefined();
    expect(await redis.exists('q1:state:alerts', 'q1:state:outbox')).toBe(0);
    const aside = (await redis.keys('q1:quarantine:*')).sort();
    expect(aside).toHaveLength(2);
    expect(aside[0]).toMatch(/^q1:quarantine:alerts:\d+$/);
    expect(await redis.get(aside[0]!)).toBe('\u0000garbage{{{');
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; key: string; movedTo?: string });
    expect(logged.map((l) => [l.msg, l.key])).toEqual([
      ['state in Redis is not JSON; moved it aside and continuing without it', 'q1:state:alerts'],
      ['state in Redis is not JSON; moved it aside and continuing without it', 'q1:state:outbox'],
    ]);
    // Written again normally afterwards.
    await store.save('outbox', { version: 1, entries: [] });
    expect(await store.load('outbox')).toEqual({ version: 1, entries: [] });
  });

  it('a silence created while state:silences holds garbage is kept, and the garbage is moved aside', async () => {
    const store = new RedisStateStore({ redis, prefix: 'q2:', logger: silentLogger() });
    await redis.set('q2:state:silences', 'garbage');
    const clock = new ManualClock(Date.parse('2026-11-25T10:00:00Z'));
    const silences = new SilenceStore(clock, store, silentLogger(), () => undefined, () => 'id-1');
    await silences.restore();
    expect(silences.list()).toEqual([]);
    await silences.create({
      matchers: [{ name: 'user', value: 'BANK1', isRegex: false, isEqual: true }],
      startsAt: new Date(clock.now()).toISOString(),
      endsAt: new Date(clock.now() + 3_600_000).toISOString(),
      createdBy: 'ops',
      comment: 'window',
    });
    const reread = new SilenceStore(clock, store, silentLogger());
    await reread.restore();
    expect(reread.list().map((s) => s.id)).toEqual(['id-1']);
    expect(await redis.keys('q2:quarantine:silences:*')).toHaveLength(1);
  });
});

describe.skipIf(!HAVE_REDIS)('connecting to Redis with a wrong password', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start({ requirepass: 'right-pass' });
  });
  afterAll(async () => {
    await server.kill();
  });

  it('says the credentials were refused (not "Connection is closed") and never shows the password', async () => {
    const { createRedis, connectRedis } = await import('../../src/ha/redis-connection.js');
    const config = { url: server.url, password: 'wrong-pass-123', key_prefix: 'x:', tls: { ca_file: '', insecure_skip_verify: false } };
    const redis = await createRedis(config as Parameters<typeof createRedis>[0], { name: 't', commandTimeoutMs: 1_000 });
    const err = await connectRedis(redis, server.url).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe('ha_redis_auth');
    expect(err?.message).toMatch(/refused the credentials \((WRONGPASS|ERR).*\); check ha\.redis\.password/);
    expect(err?.message).not.toContain('wrong-pass-123');
  });
});
