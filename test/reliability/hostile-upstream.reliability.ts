import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/daemon-process.js';
import { HAVE_REDIS, REDIS_SERVER, RedisServer } from '../helpers/redis-server.js';
import { metricSum } from './harness.js';
import { HEALTH_P99_BOUND_MS, RSS_BOUND_MB, legitDelivered, reportHostile, startHostileSetup, timedGet, underAttack, type HostileSetup } from './hostile-harness.js';

if (!HAVE_REDIS && process.env['CI'] === 'true') throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);

/**
 * A hostile upstream (issue 23): the simulator's hostile faults while the daemon polls it every second. Each
 * scenario measures `/healthz` and the daemon's RSS during the attack and checks that the legitimate burst is
 * still notified exactly once, and the corrupt-Redis scenario that a replica starts on garbage shared state.
 */

describe('reliability: a hostile upstream', () => {
  const setups: HostileSetup[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const s of setups.splice(0)) await s.cleanup();
    for (const c of cleanups.splice(0)) await c();
  });

  it('one record with a 10 MB file name and a 10 MB message on every page of failures', async () => {
    const s = await startHostileSetup('huge-strings');
    setups.push(s);
    s.sim.setFaults({ hugeFieldChars: 10 * 1024 * 1024 });
    const r = await underAttack(s.daemon, 12_000, async () => undefined);
    const invalid = await metricSum(s.daemon.url, 'transfer_watch_records_invalid_total');
    const t = await legitDelivered(s);
    const longest = Math.max(...s.daemon.logs.map((l) => JSON.stringify(l).length));
    reportHostile('hostile: 10 MB fields', `${invalid} records counted invalid, longest log line ${longest} chars`, t, r);
    // One hostile record per page of failures, a new one each poll (its time is the window's end).
    expect(invalid).toBeGreaterThanOrEqual(1);
    expect(longest).toBeLessThan(20_000);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(r.rssMb).toBeLessThan(RSS_BOUND_MB);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
    // The upstream mends: polling carries on and the source is up again.
    s.sim.setFaults({ hugeFieldChars: 0 });
    await eventually(async () => (await metricSum(s.daemon.url, 'transfer_watch_source_up')) === 1, 20_000);
  }, 120_000);

  it('a page of 1,000,000 records: cut off at max_response_bytes, backed off, health and memory bounded', async () => {
    const s = await startHostileSetup('huge-page');
    setups.push(s);
    const t = await legitDelivered(s);
    s.sim.setFaults({ hugePageRecords: 1_000_000 });
    const before = s.sim.stats().reportRequests;
    const r = await underAttack(s.daemon, 15_000, async () => undefined);
    const requests = s.sim.stats().reportRequests - before;
    const tooLarge = await metricSum(s.daemon.url, 'transfer_watch_poll_errors_total', 'reason="response_too_large"');
    const status = (await (await fetch(`${s.daemon.url}/api/v1/status`)).json()) as { sources: Array<{ streams: Array<{ lastError: { reason: string } | null; retryAt: string | null }> }> };
    reportHostile('hostile: 1M-record page', `${requests} report requests in 15 s, ${tooLarge} cut off`, t, r);
    expect(tooLarge).toBeGreaterThanOrEqual(1);
    expect(status.sources[0]?.streams.some((st) => st.lastError?.reason === 'response_too_large' && st.retryAt !== null)).toBe(true);
    // Backed off: two streams, at most a few tries each in 15 s (every second without the backoff).
    expect(requests).toBeLessThanOrEqual(8);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(r.rssMb).toBeLessThan(RSS_BOUND_MB);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 120_000);

  it('a next on every page: the window is abandoned at the page cap and fetched again only after a backoff', async () => {
    const s = await startHostileSetup('endless-next');
    setups.push(s);
    s.sim.setFaults({ endlessNext: true });
    const before = s.sim.stats().reportRequests;
    const r = await underAttack(s.daemon, 15_000, async () => undefined);
    const requests = s.sim.stats().reportRequests - before;
    const t = await legitDelivered(s);
    const abandoned = s.daemon.logs.filter((l) => l['msg'] === 'poll window abandoned; it will be fetched again' && (l['err'] as { code?: string } | undefined)?.code === 'source_too_many_pages');
    reportHostile('hostile: endless next', `${requests} report requests in 15 s, ${abandoned.length} windows abandoned`, t, r);
    // One pagination is at most max_records_per_window / page_size + 1 = 1,001 pages; without the backoff the
    // window was fetched again every interval (~4,000 requests in 15 s).
    expect(abandoned.length).toBeGreaterThanOrEqual(1);
    expect(abandoned.every((l) => Number(l['retryInSeconds']) >= 30)).toBe(true);
    expect(requests).toBeLessThanOrEqual(1_100);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(r.rssMb).toBeLessThan(RSS_BOUND_MB);
    // The burst's failures were read on the abandoned window's pages and reach the rules once.
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 120_000);

  it('a rule glob with three * against a crafted 4,000-character file name', async () => {
    const s = await startHostileSetup('glob', {
      extraRules: [{ name: 'ThreePartNames', type: 'error_burst', match: { file: ['*_*_*.RET'] }, group_by: ['user'], threshold: 1000, window: '10m', severity: 'warning' }],
    });
    setups.push(s);
    const crafted = `/in/CRAFTED/${'_'.repeat(4_000)}`;
    s.sim.inject(Array.from({ length: 20 }, (_, i) => ({ DATAHORA: new Date(Date.now() - 20_000 + i).toISOString(), USUARIO: 'CRAFTED', EVENTO: 7, RESULTADO: 21, NOMEARQUIVO: `${crafted}${i}` })));
    const r = await underAttack(s.daemon, 8_000, async () => undefined);
    const records = await metricSum(s.daemon.url, 'transfer_watch_records_total', 'stream="failures"');
    const t = await legitDelivered(s);
    reportHostile('hostile: crafted glob', `${records} failures read (20 crafted)`, t, r);
    expect(records).toBe(23);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 120_000);

  it.skipIf(!HAVE_REDIS)('garbage in state:alerts, state:silences and state:outbox: the replica moves it aside and starts', async () => {
    const redisServer = await RedisServer.start();
    cleanups.push(() => redisServer.kill());
    const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => redis.disconnect());
    for (const key of ['alerts', 'silences', 'outbox']) await redis.set(`tw:state:${key}`, `\u0000not json ${key} {{{`);
    const s = await startHostileSetup('corrupt-redis', {
      extraConfig: { ha: { redis: { url: redisServer.url, key_prefix: 'tw:' }, lease_ttl: '3s', replica_name: 'r1' } },
    });
    setups.push(s);
    await eventually(async () => (await timedGet(`${s.daemon.url}/readyz`)).status === 200, 20_000);
    const r = await underAttack(s.daemon, 3_000, async () => undefined);
    const t = await legitDelivered(s);
    const aside = await redis.keys('tw:quarantine:*');
    const logged = s.daemon.logs.filter((l) => l['msg'] === 'state in Redis is not JSON; moved it aside and continuing without it');
    reportHostile('hostile: corrupt Redis state', `${aside.length} keys moved aside`, t, r);
    expect(aside.map((k) => k.replace(/:\d+$/, '')).sort()).toEqual(['tw:quarantine:alerts', 'tw:quarantine:outbox', 'tw:quarantine:silences']);
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
    // A running replica notices garbage written later, on its next read (here: the read of a silence change).
    await redis.set('tw:state:silences', 'garbage again');
    const now = Date.now();
    const created = await fetch(`${s.daemon.url}/api/v2/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ matchers: [{ name: 'user', value: 'X', isRegex: false, isEqual: true }], startsAt: new Date(now).toISOString(), endsAt: new Date(now + 60_000).toISOString(), createdBy: 'ops', comment: 'after the garbage' }),
    });
    expect(created.status).toBe(200);
    expect(await redis.keys('tw:quarantine:silences:*')).toHaveLength(2);
    expect(JSON.parse((await redis.get('tw:state:silences')) ?? '{}')).toMatchObject({ silences: [{ comment: 'after the garbage' }] });
  }, 120_000);
});
