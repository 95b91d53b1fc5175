import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { backfillSlaLedger, WINDOW_ATTEMPTS } from '../../src/daemon/roles/sla-backfill.js';
import { GIVEN_UP_WINDOWS, retryGivenUpWindows } from '../../src/daemon/roles/sla-backfill-retry.js';
import type { HistoryStore } from '../../src/history/history-store.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import type { Poller } from '../../src/poller/poller.js';
import { transferOf } from '../../src/source/record.js';
import type { Transfer } from '../../src/source/transfer.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';
import { rulesFrom } from '../rules/rule-fixture.js';

const DAY = 86_400_000;
// Thursday 2026-11-26 12:00 UTC; the statement is due at 08:00 UTC every day, and came at 07:00 on each of the days.
const NOW = Date.parse('2026-11-26T12:00:00Z');
const CURSOR = NOW - 60_000;
const RULES = rulesFrom(`
rules:
  - name: StatementMissing
    type: missing_file
    match: { file: ["EXTRATO_*"] }
    deadline: "0 8 * * *"
    window: 8h
    severity: warning
`);

function statement(at: number): Transfer {
  return transferOf(
    {
      DATAHORA: new Date(at).toISOString(), INSTANCE: 'PROD01', USUARIO: 'BANK1', CONEXAO: '', DATAARQUIVO: '', EVENTO: 7, HORAARQUIVO: '', MAXTAMREG: null,
      NUMREG: null, MENSAGEM: '', NOMEARQUIVO: `EXTRATO_${at}.RET`, TAGS: '', PROCID: null, REDE: '', RESULTADO: 0, TAMARQUIVO: 1, THREADID: null, TIPOREC: '', DIAS: null,
    },
    undefined,
    'prod',
  );
}
const HISTORY: Transfer[] = [3, 2, 1, 0].map((d) => statement(Date.parse('2026-11-26T07:00:00Z') - d * DAY));
/** The windows a replay asks for: 6 h each, as `poll.max_window: 6h` would. */
const STEP = 6 * 3_600_000;

/**
 * A source with one stream of successes whose windows answer as told: `fails(start, n)` says whether the n-th read
 * of the window starting at `start` fails (a 500, a page too large). Every read is counted.
 */
function source(fails: (start: number, n: number) => boolean, cursor = CURSOR) {
  const reads = new Map<number, number>();
  /** When (wall clock) each read of a window was made. */
  const readAt = new Map<number, number[]>();
  const stream = {
    id: 'prod/successes',
    source: 'prod',
    kind: 'successes',
    cursor,
    since: cursor,
    lastSuccess: NOW,
    catchingUp: false,
    replayWindows(from: number, until: number = cursor): Array<{ start: number; end: number }> {
      const windows: Array<{ start: number; end: number }> = [];
      for (let start = from; start < until; start += STEP + 1) windows.push({ start, end: Math.min(until, start + STEP) });
      return windows;
    },
    async readWindow(w: { start: number; end: number }): Promise<Transfer[]> {
      const n = (reads.get(w.start) ?? 0) + 1;
      reads.set(w.start, n);
      readAt.set(w.start, [...(readAt.get(w.start) ?? []), Date.now()]);
      if (fails(w.start, n)) throw Object.assign(new Error('the service answered 500'), { code: 'SOURCE_HTTP_ERROR' });
      return HISTORY.filter((t) => t.time >= w.start && t.time <= w.end);
    },
    async reread(from: number, until: number, observe: (t: Transfer) => void): Promise<number> {
      let n = 0;
      for (const w of stream.replayWindows(from, until)) {
        for (const t of await stream.readWindow(w)) {
          n++;
          observe(t);
        }
      }
      return n;
    },
  };
  const poller = { streams: [stream], restore: async () => true } as unknown as Poller;
  return { poller, stream, reads, readAt, total: () => [...reads.values()].reduce((a, b) => a + b, 0) };
}

/** The window holding an instant (the plan's windows start at CURSOR − 3 days). */
function windowOf(at: number): number {
  const from = CURSOR - 3 * DAY;
  return from + Math.floor((at - from) / (STEP + 1)) * (STEP + 1);
}

describe.each(BACKENDS)('the SLA backfill reads the history window by window and keeps what it read (%s)', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());
  const config = configSchema.parse({ sources: [{ name: 'prod', base_url: 'http://127.0.0.1:1/api', username: 'u', password: 'p' }], sla: { backfill: '3d' } });
  const run = async (store: HistoryStore, poller: Poller, current: () => boolean = () => true, readRetryMs = 5) => {
    const metrics = new TransferWatchMetrics({ maxSeries: 100, version: 't', collectDefault: false, history: true });
    await backfillSlaLedger({ config, rules: RULES, store, replayPoller: () => poller, clock: new ManualClock(NOW), logger: silentLogger(), metrics, current, readRetryMs });
    const occurrences = await store.ledger.occurrences({ from: '2026-11-20', to: '2026-11-30', limit: 100, offset: 0 });
    return {
      outcomes: occurrences.map((o) => `${o.localDate} ${o.outcome} ${o.count}`).sort(),
      filled: await store.ledger.backfilledThrough('StatementMissing'),
      exposition: await metrics.registry.metrics(),
    };
  };
  const ALL_ON_TIME = ['2026-11-24 on_time 1', '2026-11-25 on_time 1', '2026-11-26 on_time 1'];

  it('reads a window that failed again, alone, and judges on the whole read: no no_data, no arrival counted twice', async () => {
    const store = await backend.open();
    const failing = windowOf(HISTORY[2]!.time);
    const s = source((start, n) => start === failing && n <= 2);
    const { outcomes, filled, exposition } = await run(store, s.poller);
    expect(outcomes).toEqual(ALL_ON_TIME);
    expect(filled).toBeDefined();
    // Every window once, the failing one three times.
    const windows = s.stream.replayWindows(CURSOR - 3 * DAY).length;
    expect(s.total()).toBe(windows + 2);
    expect(s.reads.get(failing)).toBe(3);
    expect(exposition).toContain(`transfer_watch_sla_backfill_windows{state="read"} ${windows}`);
    expect(exposition).toContain('transfer_watch_sla_backfill_windows{state="unread"} 0');
    // Done: nothing of the read is kept.
    expect(await store.spool.plan('span:259200000')).toBeUndefined();
    expect((await store.spool.windows('span:259200000')).size).toBe(0);
  });

  it(`gives a window up after ${WINDOW_ATTEMPTS} failed reads: only the deadline whose window it touches is no_data`, async () => {
    const store = await backend.open();
    const failing = windowOf(HISTORY[2]!.time);
    const s = source((start) => start === failing);
    const { outcomes, filled, exposition } = await run(store, s.poller);
    expect(s.reads.get(failing)).toBe(WINDOW_ATTEMPTS);
    expect(outcomes).toEqual(['2026-11-24 on_time 1', '2026-11-25 no_data 0', '2026-11-26 on_time 1']);
    expect(filled).toBeDefined();
    expect(exposition).toContain('transfer_watch_sla_backfill_windows{state="unread"} 1');
  });

  it('resumes a stopped read where it was: the windows kept are not read again, and the verdicts are those of a whole read', async () => {
    const store = await backend.open();
    const first = source(() => false);
    // The leadership ends after four windows were read.
    await run(store, first.poller, () => first.total() < 4);
    expect(first.total()).toBe(4);
    expect(await store.ledger.backfilledThrough('StatementMissing')).toBeUndefined();
    const kept = [...(await store.spool.windows('span:259200000')).values()];
    expect(kept.filter((w) => w.read)).toHaveLength(4);

    // The next start: the live cursor moved on meanwhile; the plan of the first start is read to its end.
    const second = source(() => false, CURSOR + 3_600_000);
    const { outcomes, filled } = await run(store, second.poller);
    const windows = first.stream.replayWindows(CURSOR - 3 * DAY).length;
    expect(second.total()).toBe(windows - 4);
    for (const w of kept) expect(second.reads.has(w.start)).toBe(false);
    expect(outcomes).toEqual(ALL_ON_TIME);
    expect(filled).toBe(CURSOR);
  });

  it('counts a window’s failed reads across restarts: a restart does not give it WINDOW_ATTEMPTS more', async () => {
    const store = await backend.open();
    const failing = windowOf(HISTORY[1]!.time);
    const first = source((start) => start === failing);
    await run(store, first.poller, () => (first.reads.get(failing) ?? 0) < 3);
    expect(first.reads.get(failing)).toBe(3);
    const second = source((start) => start === failing);
    const { outcomes } = await run(store, second.poller);
    expect(second.reads.get(failing)).toBe(WINDOW_ATTEMPTS - 3);
    expect(outcomes).toEqual(['2026-11-24 no_data 0', '2026-11-25 on_time 1', '2026-11-26 on_time 1']);
  });

  it('a restart does not bring a failed window\'s next read forward: it waits out the rest of its backoff from its last try', async () => {
    const store = await backend.open();
    const failing = windowOf(HISTORY[1]!.time);
    const first = source((start) => start === failing);
    await run(store, first.poller, () => (first.reads.get(failing) ?? 0) < 3, 5);
    // Three failures: the fourth read is due 4 × the base after the third (the base is 300 ms in the second life).
    const second = source(() => false);
    const started = Date.now();
    await run(store, second.poller, () => true, 300);
    const fourth = second.readAt.get(failing)?.[0] ?? 0;
    expect(fourth - started).toBeGreaterThanOrEqual(1_100);
    expect((await store.ledger.occurrences({ from: '2026-11-24', to: '2026-11-24', limit: 5, offset: 0 }))[0]?.outcome).toBe('on_time');
  });

  it('keeps a window it gave up, and reads it again later: its no_data becomes what the history shows, said in the SLA history (contract 12a)', async () => {
    const store = await backend.open();
    const failing = windowOf(HISTORY[2]!.time);
    const broken = source((start) => start === failing);
    await run(store, broken.poller);
    expect((await store.spool.windows(GIVEN_UP_WINDOWS)).size).toBe(1);
    const retry = (poller: Poller) => retryGivenUpWindows({ config, rules: RULES, store, replayPoller: () => poller, clock: new ManualClock(NOW + 3_600_000), logger: silentLogger() });
    // Still failing: kept, one more attempt counted.
    expect(await retry(broken.poller)).toMatchObject({ windows: 1, read: 0, failing: 1, replaced: 0 });
    expect([...(await store.spool.windows(GIVEN_UP_WINDOWS)).values()][0]).toMatchObject({ attempts: WINDOW_ATTEMPTS + 1 });
    // Healed: the window is read, the deadline decided, the event recorded, the window forgotten.
    const healed = source(() => false);
    expect(await retry(healed.poller)).toMatchObject({ windows: 1, read: 1, failing: 0, replaced: 1 });
    const occurrences = await store.ledger.occurrences({ from: '2026-11-20', to: '2026-11-30', limit: 100, offset: 0 });
    expect(occurrences.map((o) => `${o.localDate} ${o.outcome} ${o.count}`).sort()).toEqual(ALL_ON_TIME);
    expect((await store.ledger.excuseEvents({ from: 0, to: NOW + DAY, limit: 10 })).items[0]).toMatchObject({ event: 'backfilled', detail: { from: '2026-11-25', to: '2026-11-25', changed: 1 } });
    expect((await store.spool.windows(GIVEN_UP_WINDOWS)).size).toBe(0);
    expect(await retry(healed.poller)).toMatchObject({ windows: 0 });
  });

  it('reads the whole span again when its streams changed (another plan), and drops what nothing needs any more', async () => {
    const store = await backend.open();
    const first = source(() => false);
    await run(store, first.poller, () => first.total() < 2);
    const other = source(() => false);
    Object.assign(other.stream, { id: 'prod/PROD02/successes' });
    await run(store, other.poller);
    expect(other.total()).toBe(other.stream.replayWindows(CURSOR - 3 * DAY).length);
    // Filled: a start without anything to fill drops any plan left.
    await store.spool.begin('span:1', { span: 1, sources: [] }, NOW);
    await run(store, other.poller);
    expect(await store.spool.plan('span:1')).toBeUndefined();
  });
});

describe('the SLA backfill at a first start', () => {
  const backend = new HistoryBackend('sqlite');
  afterAll(() => backend.close());
  const config = configSchema.parse({ sources: [{ name: 'prod', base_url: 'http://127.0.0.1:1/api', username: 'u', password: 'p' }], sla: { backfill: '3d' } });

  it('waits until the successes too have a committed window: failures committed first do not make a read of nothing', async () => {
    const store = await backend.open();
    let restores = 0;
    const s = source(() => false);
    const successes = s.stream as { cursor: number | undefined };
    successes.cursor = undefined;
    const fake = {
      streams: [{ id: 'prod/failures', source: 'prod', kind: 'failures', cursor: CURSOR }, s.stream],
      restore: async () => {
        restores += 1;
        if (restores >= 2) successes.cursor = CURSOR;
        return true;
      },
    };
    await backfillSlaLedger({
      config,
      rules: RULES,
      store,
      replayPoller: () => fake as unknown as Poller,
      clock: new ManualClock(NOW),
      logger: silentLogger(),
      metrics: new TransferWatchMetrics({ maxSeries: 100, version: 't', collectDefault: false }),
      current: () => true,
    });
    expect(restores).toBeGreaterThanOrEqual(2);
    const occurrences = await store.ledger.occurrences({ from: '2026-11-20', to: '2026-11-30', limit: 100, offset: 0 });
    expect(occurrences.map((o) => `${o.localDate} ${o.outcome}`).sort()).toEqual(['2026-11-24 on_time', '2026-11-25 on_time', '2026-11-26 on_time']);
  });
});
