import { pollSchema } from '../src/config/schema.js';
import { PollStream } from '../src/poller/poll-stream.js';
import type { StreamKind } from '../src/poller/stream-kind.js';
import type { TransferPager } from '../src/poller/transfer-pager.js';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { TransferHistoryClient } from '../src/source/transfer-history-client.js';
import { MemoryStateStore } from '../src/state/state-store.js';
import { ManualClock } from '../src/util/clock.js';
import { silentLogger } from '../src/util/logger.js';
import { benchSource } from './bench-pipeline.js';

export interface OverlapResult {
  simulatedMinutes: number;
  ratePerMinute: number;
  records: number;
  requests: number;
  tokenRequests: number;
  requestsPer1000Records: number;
  /** Share of records that came back in more than one answer. */
  refetchedShare: number;
  /** Answers each record came back in, on average. */
  fetchesPerRecord: number;
}

/**
 * Steady-state polling with the default poll settings (interval 30s, success_interval 60s, delay 30s, overlap
 * 2m, page_size 1000) on a manual clock, against the simulator's history at `ratePerMinute`. The first cycle
 * (the initial look-back) is not counted: it is a one-off backfill, not the overlap's running cost.
 */
export async function measureOverlap(simulatedMinutes: number, ratePerMinute: number): Promise<OverlapResult> {
  const start = Date.UTC(2026, 0, 5, 9, 0, 0);
  const clock = new ManualClock(start);
  const sim = await startSimulator({ seed: 11, clock, ratePerMinute, historyStart: start - 2 * 3_600_000, scenario: 'steady' });
  try {
    const poll = pollSchema.parse({});
    const counting = { on: false, requests: 0, tokens: 0 };
    const fetches = new Map<string, { time: number; n: number }>();
    const client = new TransferHistoryClient({
      source: benchSource(sim.url),
      logger: silentLogger(),
      hooks: {
        onRequest: (endpoint) => {
          if (!counting.on) return;
          if (endpoint === 'transfers') counting.requests++;
          else counting.tokens++;
        },
      },
    });
    const pager: TransferPager = {
      async *pages(query, signal) {
        for await (const page of client.pages(query, signal)) {
          if (counting.on) {
            for (const t of page.transfers) {
              const seen = fetches.get(t.id);
              if (seen) seen.n++;
              else fetches.set(t.id, { time: t.time, n: 1 });
            }
          }
          yield page;
        }
      },
    };
    const state = new MemoryStateStore();
    const streams = (['failures', 'successes'] as StreamKind[]).map(
      (kind) =>
        new PollStream('bench', kind, undefined, {
          poll,
          tags: '',
          pager,
          clock,
          logger: silentLogger(),
          sink: () => {},
          hooks: {},
          save: () => state.save(kind, {}),
        }),
    );
    for (const s of streams) await s.runCycle();
    const from = Math.min(...streams.map((s) => s.cursor ?? Infinity));
    counting.on = true;
    const step = 30_000;
    const due = new Map(streams.map((s) => [s, clock.now() + s.intervalMs]));
    for (let elapsed = 0; elapsed < simulatedMinutes * 60_000; elapsed += step) {
      clock.advance(step);
      for (const s of streams) {
        if ((due.get(s) ?? 0) <= clock.now()) {
          await s.runCycle();
          due.set(s, clock.now() + s.intervalMs);
        }
      }
    }
    const until = Math.min(...streams.map((s) => s.cursor ?? 0));
    // Only records whose whole overlap life was watched: after the first cursor, a full overlap before the last.
    let records = 0;
    let refetched = 0;
    let total = 0;
    let fresh = 0;
    for (const { time, n } of fetches.values()) {
      if (time > from) fresh++;
      if (time <= from || time > until - poll.overlap) continue;
      records++;
      total += n;
      if (n > 1) refetched++;
    }
    return {
      simulatedMinutes,
      ratePerMinute,
      records,
      requests: counting.requests,
      tokenRequests: counting.tokens,
      requestsPer1000Records: (counting.requests / fresh) * 1000,
      refetchedShare: refetched / records,
      fetchesPerRecord: total / records,
    };
  } finally {
    await sim.close();
  }
}
