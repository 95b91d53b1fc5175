import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { backfillSlaLedger } from '../../src/daemon/roles/sla-backfill.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import type { Poller } from '../../src/poller/poller.js';
import type { Transfer } from '../../src/source/transfer.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { HistoryBackend } from '../helpers/history-backends.js';
import { rulesFrom } from '../rules/rule-fixture.js';
import { transfer } from '../rules/transfer-fixture.js';

const DAY = 86_400_000;
// Thursday 2026-11-26 12:00 UTC; the statement is due at 08:00 UTC every day, and came at 07:00 on each of the days.
const NOW = Date.parse('2026-11-26T12:00:00Z');
const RULES = rulesFrom(`
rules:
  - name: StatementMissing
    type: missing_file
    match: { file: ["EXTRATO_*"] }
    deadline: "0 8 * * *"
    window: 8h
    severity: warning
`);
const HISTORY: Transfer[] = [3, 2, 1, 0].map((d) => transfer({ time: Date.parse('2026-11-26T07:00:00Z') - d * DAY }));

/** A source's history that answers as told: `fails` reads in a row cannot be read whole, then every read is. */
function poller(fails: number): { poller: Poller; reads: () => number } {
  let reads = 0;
  const fake = {
    streams: [{ id: 'prod/successes', source: 'prod', kind: 'successes', cursor: NOW - 60_000, since: NOW - 60_000, lastSuccess: NOW, catchingUp: false }],
    restore: async () => true,
    replay: async (lookback: number, observe: (t: Transfer) => void) => {
      reads += 1;
      // A failed read hands on part of the history before it fails, as a window answered 500 halfway does.
      for (const t of reads <= fails ? HISTORY.slice(0, 2) : HISTORY) if (t.time >= NOW - lookback) observe(t);
      return reads > fails;
    },
  };
  return { poller: fake as unknown as Poller, reads: () => reads };
}

describe('the SLA backfill over a history that could not be read whole', () => {
  const backend = new HistoryBackend('sqlite');
  afterAll(() => backend.close());
  const config = configSchema.parse({ sources: [{ name: 'prod', base_url: 'http://127.0.0.1:1/api', username: 'u', password: 'p' }], sla: { backfill: '3d' } });
  const run = async (fails: number) => {
    const store = await backend.open();
    const source = poller(fails);
    await backfillSlaLedger({
      config,
      rules: RULES,
      store,
      replayPoller: () => source.poller,
      clock: new ManualClock(NOW),
      logger: silentLogger(),
      metrics: new TransferWatchMetrics({ maxSeries: 100, version: 't', collectDefault: false }),
      current: () => true,
      readRetryMs: 10,
    });
    const occurrences = await store.ledger.occurrences({ from: '2026-11-20', to: '2026-11-30', limit: 100, offset: 0 });
    return { outcomes: occurrences.map((o) => `${o.localDate} ${o.outcome} ${o.count}`), filled: await store.ledger.backfilledThrough('StatementMissing'), reads: source.reads() };
  };

  it('reads it again, with a fresh count, and writes the verdicts of a whole read: no no_data, no arrival counted twice', async () => {
    const { outcomes, filled, reads } = await run(2);
    expect(reads).toBe(3);
    expect(outcomes.sort()).toEqual(['2026-11-24 on_time 1', '2026-11-25 on_time 1', '2026-11-26 on_time 1']);
    expect(filled).toBeDefined();
  });

  it('writes nothing and marks nothing filled when it never could: the next start reads it again', async () => {
    const { outcomes, filled, reads } = await run(Infinity);
    expect(reads).toBe(4);
    expect(outcomes).toEqual([]);
    expect(filled).toBeUndefined();
  });

  it('waits at a first start until the successes too have a committed window: failures committed first do not make a read of nothing', async () => {
    const store = await backend.open();
    let restores = 0;
    const successes: { id: string; source: string; kind: string; cursor: number | undefined } = { id: 'prod/successes', source: 'prod', kind: 'successes', cursor: undefined };
    const fake = {
      streams: [{ id: 'prod/failures', source: 'prod', kind: 'failures', cursor: NOW - 60_000 }, successes],
      restore: async () => {
        restores += 1;
        if (restores >= 2) successes.cursor = NOW - 60_000;
        return true;
      },
      // As a stream replays: up to its own cursor, nothing without one.
      replay: async (lookback: number, observe: (t: Transfer) => void) => {
        if (successes.cursor !== undefined) for (const t of HISTORY) if (t.time >= NOW - lookback) observe(t);
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
