import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { Poller } from '../../src/poller/poller.js';
import type { PagerPage, PagerQuery, TransferPager } from '../../src/poller/transfer-pager.js';
import type { Transfer } from '../../src/source/transfer.js';
import type { Config, SourceConfig } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { parseRecord } from '../../src/source/record.js';
import { recordIdentityV1 } from '../../src/source/record-identity.js';
import { SeenTransfers } from '../../src/util/seen-transfers.js';
import { createLogger, silentLogger, type Logger } from '../../src/util/logger.js';
import { wireRecord } from '../source/fake-transfer-service.js';

function transfer(id: string, time: number, code = 36): Transfer {
  return {
    id,
    source: 'prod',
    time,
    instance: 'PROD01',
    user: 'BANK1',
    eventCode: 7,
    event: 'reception',
    file: `${id}.RET`,
    code,
    result: code === 0 ? 'success' : 'error',
    size: 10,
    message: 'x',
    tags: '',
    record: {} as Transfer['record'],
  };
}

/** A pager over a fixed history that can be told to fail on a given page. */
class FakePager implements TransferPager {
  queries: PagerQuery[] = [];
  failOnPage: number | undefined;
  failReason = 'server_error';
  /** Unreadable records in the history, by time, each with its identity (a hash of its raw JSON). */
  invalid: Array<{ id: string; time: number }> = [];
  constructor(public history: Transfer[]) {}
  async *pages(q: PagerQuery): AsyncGenerator<PagerPage> {
    this.queries.push(q);
    const rows = this.history.filter((t) => t.time >= q.start && t.time <= q.end && (q.results === 0) === (t.code === 0));
    for (let i = 0, page = 0; i < Math.max(rows.length, 1); i += 2, page += 1) {
      if (this.failOnPage === page) throw Object.assign(new Error('boom'), { reason: this.failReason });
      const bad = page === 0 ? this.invalid.filter((b) => b.time >= q.start && b.time <= q.end && q.results !== 0) : [];
      yield { transfers: rows.slice(i, i + 2), invalid: bad.length, invalidIds: bad.map((b) => b.id) };
    }
  }
}

function config(extra: Partial<Record<string, unknown>> = {}): Config {
  return configSchema.parse({
    sources: [{ name: 'prod', base_url: 'http://127.0.0.1:1/api', username: 'u', password: 'p' }],
    poll: { interval: '10s', success_interval: '0', delay: '30s', overlap: '2m', page_size: 2, initial_lookback: '1h', max_window: '1h', ...extra },
  });
}

function setup(history: Transfer[], cfg = config(), logger: Logger = silentLogger()) {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const pager = new FakePager(history);
  const sunk: string[] = [];
  const invalidCounted: number[] = [];
  const state = new MemoryStateStore();
  const make = () =>
    new Poller({
      sources: cfg.sources as SourceConfig[],
      poll: cfg.poll,
      pagerFor: () => pager,
      clock,
      logger,
      state,
      sink: (t) => sunk.push(t.id),
      hooks: { onInvalidRecords: (_source, n) => invalidCounted.push(n) },
      startedAt: clock.now(),
    });
  return { clock, pager, sunk, state, make, invalidCounted };
}

describe('Poller', () => {
  it('counts an unreadable record once although overlapping windows fetch it again (as valid ones)', async () => {
    const { clock, pager, make, invalidCounted } = setup([]);
    pager.invalid.push({ id: 'a'.repeat(32), time: clock.now() - 50_000 });
    const poller = make();
    await poller.restore();
    await poller.streams[0]!.runCycle();
    clock.advance(10_000);
    await poller.streams[0]!.runCycle();
    // Two windows both covered the bad record (overlap 2m); it counts once.
    expect(pager.queries).toHaveLength(2);
    expect(invalidCounted.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('counts an unreadable record once across a restart between two windows that fetch it', async () => {
    const { clock, pager, make, invalidCounted } = setup([]);
    pager.invalid.push({ id: 'b'.repeat(32), time: clock.now() - 50_000 });
    const first = make();
    await first.restore();
    await first.streams[0]!.runCycle();
    clock.advance(10_000);
    // A new process on the state the first one saved (its unreadable records' ids are saved apart from the ids of
    // the transfers, which are kept by their time).
    const second = make();
    await second.restore();
    await second.streams[0]!.runCycle();
    expect(pager.queries).toHaveLength(2);
    expect(invalidCounted.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('is catching up from its start until a window reaches the present, and again after a restart on old state', async () => {
    // Five failures in the second of the three windows (pages of two): its third page can fail alone.
    const t0 = Date.UTC(2026, 10, 22, 10, 10, 0);
    const history = [0, 1, 2, 3, 4].map((i) => transfer(`t${i}`, t0 + i * 60_000));
    const { clock, pager, make } = setup(history, config({ initial_lookback: '3h' }));
    const poller = make();
    await poller.restore();
    const stream = poller.streams[0]!;
    expect(stream.catchingUp).toBe(true);
    // The second of the three windows fails: the catch-up is not over, whatever the cursor says.
    pager.failOnPage = 2;
    await stream.runCycle();
    expect(stream.cursor).toBeDefined();
    expect(stream.catchingUp).toBe(true);
    pager.failOnPage = undefined;
    await stream.runCycle();
    expect(stream.cursor).toBe(clock.now() - 30_000);
    expect(stream.catchingUp).toBe(false);
    // A restart two hours later: the saved cursor is not the present until the windows in between are read.
    clock.advance(2 * 3_600_000);
    const again = make();
    await again.restore();
    expect(again.streams[0]!.catchingUp).toBe(true);
    await again.streams[0]!.runCycle();
    expect(again.streams[0]!.catchingUp).toBe(false);
  });

  it('hands each transfer on once although overlapping windows fetch it again', async () => {
    const t0 = Date.UTC(2026, 10, 22, 11, 50, 0);
    const { clock, pager, sunk, make } = setup([transfer('a', t0), transfer('b', t0 + 1000)]);
    const poller = make();
    await poller.streams[0]!.runCycle();
    expect(sunk).toEqual(['a', 'b']);
    clock.advance(10_000);
    pager.history.push(transfer('c', clock.now() - 40_000));
    await poller.streams[0]!.runCycle();
    expect(sunk).toEqual(['a', 'b', 'c']);
    // The second window began overlap before the cursor.
    expect(pager.queries[1]!.start).toBe(pager.queries[0]!.end - 120_000);
  });

  it('does not move the cursor when a window fails, and does not hand on twice when it is fetched again', async () => {
    const t0 = Date.UTC(2026, 10, 22, 11, 50, 0);
    const history = [1, 2, 3, 4, 5].map((i) => transfer(`t${i}`, t0 + i * 1000));
    const { pager, sunk, make } = setup(history);
    const poller = make();
    const stream = poller.streams[0]!;
    expect(stream.status(Date.now()).up).toBe(false);
    pager.failOnPage = 1;
    await stream.runCycle();
    expect(stream.cursor).toBeUndefined();
    expect(stream.lastError?.reason).toBe('server_error');
    expect(stream.status(Date.now())).toMatchObject({ up: false, lastError: { reason: 'server_error' } });
    expect(sunk).toEqual(['t1', 't2']);
    pager.failOnPage = undefined;
    await stream.runCycle();
    expect(sunk).toEqual(['t1', 't2', 't3', 't4', 't5']);
    expect(stream.cursor).toBeDefined();
    expect(stream.status(Date.now())).toMatchObject({ up: true, lastError: null });
  });

  it('backs off after windows lost to a bad answer (too_many_pages): 2x, 4x ... the interval (at least 15 s), at most 10 min; says when; a good window resets it', async () => {
    const t0 = Date.UTC(2026, 10, 22, 11, 50, 0);
    const { clock, pager, make } = setup([1, 2, 3].map((i) => transfer(`t${i}`, t0 + i * 1000)));
    const stream = make().streams[0]!;
    expect(stream.nextDelayMs).toBe(10_000);
    pager.failOnPage = 0;
    pager.failReason = 'too_many_pages';
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      await stream.runCycle();
      delays.push(stream.nextDelayMs);
    }
    // Doubling from at least 15 s (the interval here is 10 s): a bad answer does not mend in a second.
    expect(delays).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000]);
    expect(stream.status(clock.now())).toMatchObject({ up: false, lastError: { reason: 'too_many_pages' }, retryAt: new Date(clock.now() + 600_000).toISOString() });
    pager.failOnPage = undefined;
    await stream.runCycle();
    expect(stream.nextDelayMs).toBe(10_000);
    expect(stream.status(clock.now()).retryAt).toBeNull();
    // A network-like failure was already retried inside the cycle: the next cycle comes at the interval.
    pager.failOnPage = 0;
    pager.failReason = 'network';
    clock.advance(10_000);
    await stream.runCycle();
    expect(stream.nextDelayMs).toBe(10_000);
  });

  it('catches up in max_window steps and persists the cursor after each', async () => {
    const { clock, pager, state, make } = setup([]);
    const first = make();
    await first.streams[0]!.runCycle();
    const cursor = first.streams[0]!.cursor!;
    clock.advance(3 * 3_600_000);
    await first.streams[0]!.runCycle();
    // three further windows of at most 1h each
    expect(pager.queries.slice(1).map((q) => q.end - (q.start + 120_000))).toEqual([3_600_000, 3_600_000, 3_600_000]);
    const second = make();
    expect(await second.restore()).toBe(true);
    expect(second.streams[0]!.cursor).toBe(cursor + 3 * 3_600_000);
    expect(state.snapshots.has('cursors')).toBe(true);
  });

  it('after a restart, replays history into the rules only and remembers the overlap as seen', async () => {
    const t0 = Date.UTC(2026, 10, 22, 11, 58, 0);
    const { sunk, make } = setup([transfer('old', t0 - 30 * 60_000), transfer('recent', t0)]);
    const first = make();
    await first.streams[0]!.runCycle();
    expect(sunk).toEqual(['old', 'recent']);
    await first.save();
    sunk.length = 0;
    const second = make();
    await second.restore();
    // Simulate a lost seen-set (e.g. state written before the last window) to prove replay marks the overlap.
    second.streams[0]!.restore({ cursor: first.streams[0]!.cursor!, seen: [] });
    const observed: string[] = [];
    await second.replay(3_600_000, (t) => observed.push(t.id));
    expect(observed.sort()).toEqual(['old', 'recent']);
    await second.streams[0]!.runCycle();
    expect(sunk).toEqual([]);
  });

  describe('state saved with an earlier record identity (an upgrade)', () => {
    // Real records, so that both versions' ids can be computed; failures, a second apart, in the last overlap.
    const t0 = Date.UTC(2026, 10, 22, 11, 58, 0);
    const failed = (i: number): Transfer => {
      const r = parseRecord(wireRecord({ DATAHORA: new Date(t0 + i * 1000).toISOString(), NOMEARQUIVO: `/in/F${i}.RET` }), 'prod');
      if (!r.ok) throw new Error(r.reason);
      return r.transfer;
    };
    /** The cursors as 0.1.x saved them: no identity version, the overlap's ids by SHA-256 (version 1). */
    function savedByVersion1(state: MemoryStateStore, cursor: number, handedOn: Transfer[], identity?: number): void {
      const seen = new SeenTransfers();
      for (const t of handedOn) seen.add(recordIdentityV1(t.record), t.time);
      state.snapshots.set('cursors', JSON.stringify({ 'prod/failures': { cursor, seen: seen.toJSON(), ...(identity ? { identity } : {}) } }));
    }

    it('does not hand on again what the last overlap handed on, and forgets the old ids once past it', async () => {
      const before = [failed(0), failed(1)];
      const late = failed(2); // arrived at the service after the last window was read: new to both versions
      const { clock, state, sunk, make } = setup([...before, late]);
      savedByVersion1(state, t0 + 5_000, before);
      const poller = make();
      expect(await poller.restore()).toBe(true);
      await poller.streams[0]!.runCycle();
      expect(sunk).toEqual([late.id]);
      const saved = JSON.parse(state.snapshots.get('cursors')!)['prod/failures'];
      expect(saved).toMatchObject({ identity: 2, earlier: { identity: 1 } });
      // A restart before the old ids are past the overlap still finds them.
      const again = make();
      await again.restore();
      again.streams[0]!.cursor = t0 + 5_000;
      sunk.length = 0;
      await again.streams[0]!.runCycle();
      expect(sunk).toEqual([]);
      // Once every window starts after them, they are forgotten and not saved any more.
      clock.advance(5 * 60_000);
      await again.streams[0]!.runCycle();
      expect(JSON.parse(state.snapshots.get('cursors')!)['prod/failures'].earlier).toBeUndefined();
      expect(sunk).toEqual([]);
    });

    it('says so when the ids are of a version it does not know (a downgrade), and hands the overlap on again', async () => {
      const before = [failed(0)];
      const lines: string[] = [];
      const { state, sunk, make } = setup(before, config(), createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(l) } }));
      savedByVersion1(state, t0 + 5_000, before, 9);
      const poller = make();
      await poller.restore();
      await poller.streams[0]!.runCycle();
      expect(sunk).toEqual([before[0]!.id]);
      expect(lines.map((l) => JSON.parse(l) as { msg: string; identity?: number }).find((l) => /identity version this one does not know/.test(l.msg))).toMatchObject({ identity: 9 });
    });
  });

  it('reports completeness per source and result kind', async () => {
    const cfg = config({ success_interval: '1m' });
    const { make, clock } = setup([], cfg);
    const poller = make();
    expect(poller.completeUntil('prod', 'success')).toBeUndefined();
    await Promise.all(poller.streams.map((s) => s.runCycle()));
    expect(poller.completeUntil('prod', 'success')).toBe(clock.now() - 30_000);
    expect(poller.completeUntil('prod', 'error')).toBe(clock.now() - 30_000);
    expect(poller.completeUntil('other', 'error')).toBeUndefined();
  });
});
