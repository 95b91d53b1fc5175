import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseCoordinator } from '../../src/ha/lease-coordinator.js';
import { LEADER_LEASE, sourceLease } from '../../src/cluster/cluster.js';
import { RedisStateStore } from '../../src/ha/redis-state-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { HAVE_REDIS, REDIS_SERVER, RedisServer } from '../helpers/redis-server.js';

if (!HAVE_REDIS && process.env['CI'] === 'true') throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);

const SOURCES = ['s1', 's2', 's3', 's4', 's5'];

describe.skipIf(!HAVE_REDIS)('LeaseCoordinator on a real Redis', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await server.kill();
  });

  function coordinator(replica: string, prefix: string, clock?: { now: number }) {
    const redis = new Redis(server.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
    clients.push(redis);
    const events: string[] = [];
    const c = new LeaseCoordinator({
      redis,
      prefix,
      replica,
      ttlMs: 3_000,
      sources: SOURCES,
      logger: silentLogger(),
      ...(clock ? { monotonic: () => clock.now } : {}),
      onAcquired: (lease) => events.push(`+${lease}`),
      onLost: (lease) => events.push(`-${lease}`),
    });
    return { c, events, redis };
  }

  const sourcesOf = (c: LeaseCoordinator) => c.leases.filter((l) => l.startsWith('source:')).length;

  it('spreads sources over live replicas (at most ceil(sources/replicas) each), one leader, and rebalances when one joins or leaves', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((r) => coordinator(r, 'bal:'));
    if (!a || !b || !c) throw new Error('setup');
    for (let round = 0; round < 3; round++) for (const x of [a, b, c]) await x.c.heartbeat();
    const counts = [a, b, c].map((x) => sourcesOf(x.c));
    expect(counts.reduce((n, k) => n + k, 0)).toBe(5);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
    expect([a, b, c].filter((x) => x.c.holds(LEADER_LEASE))).toHaveLength(1);
    // Every source has exactly one holder.
    for (const s of SOURCES) expect([a, b, c].filter((x) => x.c.holds(sourceLease(s))), s).toHaveLength(1);

    const d = coordinator('d', 'bal:');
    for (let round = 0; round < 3; round++) for (const x of [a, b, c, d]) await x.c.heartbeat();
    expect(sourcesOf(d.c)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...[a, b, c, d].map((x) => sourcesOf(x.c)))).toBeLessThanOrEqual(2);

    // A replica that stops gives its leases back at once; the others take them at their next heartbeat.
    await a.c.stop();
    for (const x of [b, c, d]) await x.c.heartbeat();
    for (const s of SOURCES) expect([b, c, d].filter((x) => x.c.holds(sourceLease(s))), s).toHaveLength(1);
    expect([b, c, d].filter((x) => x.c.holds(LEADER_LEASE))).toHaveLength(1);
  });

  it('a paused holder stops holding before it can act; its fenced writes are refused once another took over', async () => {
    const clock = { now: 0 };
    const paused = coordinator('p', 'fence:', clock);
    await paused.c.heartbeat();
    expect(paused.c.holds(LEADER_LEASE)).toBe(true);
    const store = new RedisStateStore({ redis: paused.redis, prefix: 'fence:', fence: () => paused.c.fence(LEADER_LEASE) });
    await store.save('alerts', { v: 1 });
    const staleFence = paused.c.fence(LEADER_LEASE);

    // Paused past the TTL (its monotonic clock jumps when it wakes): it no longer holds, whatever Redis says yet.
    clock.now += 3_500;
    expect(paused.events).not.toContain(`-${LEADER_LEASE}`);
    expect(paused.c.holds(LEADER_LEASE)).toBe(false);
    // The first question after the pause tells the loss (and stops the role) before any write is tried and fenced.
    expect(paused.events.at(-1)).toBe(`-${LEADER_LEASE}`);
    expect(paused.c.fence(LEADER_LEASE)).toBeUndefined();
    await expect(store.save('alerts', { v: 2 })).rejects.toMatchObject({ code: 'ha_fenced' });

    // Meanwhile the lease expired in Redis and another replica took it, with a higher token.
    await paused.redis.del('fence:lease:leader');
    const zombie = new RedisStateStore({ redis: paused.redis, prefix: 'fence:', fence: () => staleFence });
    // Nobody holds it: the refusal says so rather than blaming another replica.
    await expect(zombie.save('alerts', { v: 3 })).rejects.toThrow(/state alerts not written \(fenced\): the leader lease is not in Redis any more/);
    const other = coordinator('o', 'fence:');
    await other.c.heartbeat();
    expect(other.c.token(LEADER_LEASE)).toBeGreaterThan(Number(staleFence?.value.split('#')[1]));
    // Even with the old lease value in hand, a write is refused by the script in Redis, naming the holder.
    await expect(zombie.save('alerts', { v: 3 })).rejects.toMatchObject({ code: 'ha_fenced', message: 'state alerts not written (fenced): replica o holds the leader lease now' });
    expect(await new RedisStateStore({ redis: paused.redis, prefix: 'fence:' }).load('alerts')).toEqual({ v: 1 });
    // Its next heartbeat does not tell the loss again.
    await paused.c.heartbeat();
    expect(paused.events.filter((e) => e === `-${LEADER_LEASE}`)).toHaveLength(1);
    expect(await paused.c.confirm(LEADER_LEASE)).toBe(false);
    expect(await other.c.confirm(LEADER_LEASE)).toBe(true);
  });
});
