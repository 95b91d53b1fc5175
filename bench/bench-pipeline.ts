import { AlertStore } from '../src/alerts/alert-store.js';
import { pollSchema, sourceSchema, type PollConfig, type SourceConfig } from '../src/config/schema.js';
import { TransferWatchMetrics } from '../src/metrics/transfer-watch-metrics.js';
import { LocalTransferBus } from '../src/cluster/local-transfer-bus.js';
import { PollStream } from '../src/poller/poll-stream.js';
import type { StreamKind } from '../src/poller/stream-kind.js';
import { RuleEngine } from '../src/rules/rule-engine.js';
import type { RuleDefinition } from '../src/rules/registry.js';
import { SourceHttp } from '../src/source/source-http.js';
import { TokenProvider } from '../src/source/token-provider.js';
import { TransferHistoryClient } from '../src/source/transfer-history-client.js';
import { serviceEndpoints } from '../src/source/transfers-query.js';
import { floorLoop } from './page-server.js';
import { MemoryStateStore } from '../src/state/state-store.js';
import { ManualClock } from '../src/util/clock.js';
import { EventLoopShare, TimeSlice } from '../src/util/time-slice.js';
import { silentLogger } from '../src/util/logger.js';

/** A fixed slice of the simulator's history: [start, end] epoch ms, served at `url`. */
export interface BenchHistory {
  url: string;
  start: number;
  end: number;
}

export interface ThroughputResult {
  records: number;
  seconds: number;
  recordsPerSecond: number;
  requests: number;
}

export interface PipelineResult extends ThroughputResult {
  rules: number;
  evaluations: number;
  alertsFiring: number;
  matchChecks: number;
}

const STREAMS: readonly StreamKind[] = ['failures', 'successes'];
/** The daemon evaluates after each poll cycle; once per 1,000 handed-on transfers (about a page) is stricter. */
export const EVALUATE_EVERY = 1000;
/** The leading role's gap between two evaluations of a catch-up (src/daemon/roles/leading-role.ts). */
const MIN_EVALUATION_GAP_MS = 1_000;

/**
 * Poll settings for a pipeline that reads its history in windows as the daemon does by default (`poll.max_window`),
 * not in one window over the whole history as the throughput lines do (the fewest requests and commits). A window's
 * ids are held until it commits: over a 100-minute backfill that was a table of a million ids, which the daemon
 * as configured by default never holds.
 */
export function daemonWindows(): Partial<Record<keyof PollConfig, string>> {
  return { max_window: `${pollSchema.parse({}).max_window}ms` };
}

export function benchSource(url: string): SourceConfig {
  return sourceSchema.parse({ name: 'bench', base_url: url, username: 'demo', password: 'demo' });
}

/** The two queries the daemon's streams send for a window (failures, successes), page_size 1000. */
function queriesFor(h: BenchHistory) {
  return [
    { start: h.start, end: h.end, results: -1 as const, limit: 1000 },
    { start: h.start, end: h.end, results: 0 as const, limit: 1000 },
  ];
}

/**
 * The client line: the real client over real HTTP, validating and normalising every record, nothing else. A
 * transfer's identity is not part of it: it is computed when first asked for, by what deduplicates (the pipeline
 * lines' poll streams), as `query` never does. With `identities`, each transfer's id is asked for as well: the client
 * as it was until the twenty-fourth round, which the pipelines' ratio to the client (goals 0.7 and 0.5) was set
 * against.
 */
export async function measureFetch(h: BenchHistory, identities = false): Promise<ThroughputResult> {
  let requests = 0;
  const client = new TransferHistoryClient({
    source: benchSource(h.url),
    logger: silentLogger(),
    hooks: { onRequest: (endpoint) => void (endpoint === 'transfers' && requests++) },
  });
  const started = performance.now();
  const counts = await Promise.all(
    queriesFor(h).map(async (q) => {
      let n = 0;
      let idLengths = 0;
      for await (const page of client.pages(q)) {
        n += page.transfers.length;
        if (identities) for (const t of page.transfers) idLengths += t.id.length;
      }
      if (identities && idLengths !== n * 16) throw new Error(`${n} transfers, ${idLengths} id characters`);
      return n;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const records = counts.reduce((a, b) => a + b, 0);
  return { records, seconds, recordsPerSecond: records / seconds, requests };
}

/**
 * The client's HTTP layer alone: the SourceHttp instances the client makes (undici, with its retries, deadline per
 * attempt, size cap and body parsed in the layer; the token through TokenProvider), in the floor's loop, reading no
 * record.
 * Between the floor and the client it tells what the HTTP library costs and what the client's work per record does.
 */
export async function measureHttpLayer(h: BenchHistory): Promise<ThroughputResult> {
  const source = benchSource(h.url);
  const endpoints = serviceEndpoints(h.url);
  const logger = silentLogger();
  const http = (endpoint: 'token' | 'transfers') =>
    new SourceHttp({
      endpoint,
      timeoutMs: source.timeout,
      attempts: source.retries,
      retryDelay: () => 1,
      tls: { insecureSkipVerify: false },
      logger,
      onAttempt: () => undefined,
      maxResponseBytes: source.max_response_bytes,
      ...(endpoint === 'transfers' ? { parseBody: (text: string): unknown => JSON.parse(text) } : {}),
    });
  const tokenHttp = http('token');
  const tokens = new TokenProvider({ http: tokenHttp, tokenUrl: endpoints.token, username: source.username, password: source.password, logger });
  const token = await tokens.get();
  const transfers = http('transfers');
  try {
    return await floorLoop(h, async (url) => {
      const res = await transfers.get(url, { authorization: `Bearer ${token}`, accept: 'application/json' });
      return res.body as { data: unknown[]; next: string };
    });
  } finally {
    await Promise.all([transfers.close(), tokenHttp.close()]);
  }
}

export interface Pipeline {
  run(): Promise<PipelineResult>;
  engine: RuleEngine;
}

/**
 * The daemon's ingestion path without its timers: both poll streams (failures, successes) run at once through
 * the real client, the streams' dedup, `metrics.observeTransfer`, `RuleEngine.observe`, then `evaluate` and
 * `AlertStore.apply` every EVALUATE_EVERY transfers. The service's clock is fixed after the history; the rules'
 * clock follows the newest transfer seen, as if the history were arriving live (a backfill on the wall clock
 * would drop most transfers as older than every rule window, and measure nothing).
 */
export function createPipeline(
  h: BenchHistory,
  rules: RuleDefinition[],
  poll: Partial<Record<keyof PollConfig, string>> = {},
  onPage?: () => void,
  /** Metrics to count into (the scrape-under-load line scrapes them meanwhile); fresh ones by default. */
  sharedMetrics?: TransferWatchMetrics,
  /**
   * `transfers` (default): evaluate every EVALUATE_EVERY transfers, stricter than the daemon. `daemon`: as the
   * leading role evaluates a catch-up, at most once every MIN_EVALUATION_GAP_MS (the onPage hook still runs
   * every EVALUATE_EVERY transfers).
   */
  cadence: 'transfers' | 'daemon' = 'transfers',
): Pipeline {
  const logger = silentLogger();
  const pollClock = new ManualClock(h.end);
  const dataClock = new ManualClock(h.start);
  const span = h.end - h.start;
  const pollConfig = pollSchema.parse({ delay: '0s', initial_lookback: `${span}ms`, max_window: `${span + 1}ms`, ...poll });
  // As the daemon builds them: the poll streams deduplicate, so no id memory of their own.
  const metrics = sharedMetrics ?? new TransferWatchMetrics({ maxSeries: 10_000, version: 'bench' });
  // As the daemon shares its event loop: one share for the client's pages, the bus reader and the evaluations.
  const loop = new EventLoopShare();
  const engine = new RuleEngine(rules, { clock: dataClock, logger, sources: ['bench'], loop });
  const alerts = new AlertStore({ clock: dataClock, logger, state: new MemoryStateStore() });
  let requests = 0;
  const client = new TransferHistoryClient({
    source: benchSource(h.url),
    logger,
    loop,
    hooks: { onRequest: (endpoint) => void (endpoint === 'transfers' && requests++) },
  });
  let handed = 0;
  let evaluations = 0;
  // As the leading role evaluates: in slices (src/rules/rule-engine.ts).
  const evaluate = async (): Promise<void> => {
    const now = dataClock.now();
    alerts.apply(await engine.evaluateInSlices(now, { completeUntil: () => now }), now);
    evaluations++;
  };
  // As a single node runs it (a cluster of one): the pollers hand transfers to the in-memory bus, the leading
  // role reads the bus and feeds the rules.
  const state = new MemoryStateStore();
  const bus = new LocalTransferBus(state);
  const writer = bus.writer('bench');
  const fence = { key: 'source:bench', value: 'bench#1' };
  let read = 0;
  let done = false;
  let lastEvaluatedAt = performance.now();
  const consume = async (): Promise<void> => {
    let last = await bus.consumed();
    while (!done || read < handed) {
      const entries = await bus.read(last, 5);
      // In slices, as the leading role reads the bus (src/daemon/roles/leading-role.ts).
      const slice = new TimeSlice(loop);
      for (const e of entries) {
        if (!('transfers' in e)) continue;
        for (const t of e.transfers) {
          if (slice.spent()) await slice.yield();
          if (t.time > dataClock.now()) dataClock.set(t.time);
          engine.observe(t);
          if (++read % EVALUATE_EVERY === 0) {
            if (cadence === 'transfers' || performance.now() - lastEvaluatedAt >= MIN_EVALUATION_GAP_MS) {
              await evaluate();
              lastEvaluatedAt = performance.now();
            }
            onPage?.();
          }
        }
      }
      last = entries[entries.length - 1]?.id ?? last;
    }
  };
  const streams: PollStream[] = STREAMS.map(
    (kind): PollStream =>
      new PollStream('bench', kind, undefined, {
        poll: pollConfig,
        tags: '',
        pager: client,
        clock: pollClock,
        logger,
        sink: (t) => {
          metrics.observeTransfer(t);
          handed++;
          writer.add(t);
        },
        hooks: {},
        save: (): Promise<void> => writer.commit(fence, `source.bench.cursor-${kind}`, streams.map((s) => s.snapshot()), []),
      }),
  );
  return {
    engine,
    async run() {
      const started = performance.now();
      const leader = consume();
      await Promise.all(streams.map((s) => s.runCycle()));
      done = true;
      await leader;
      await evaluate();
      const seconds = (performance.now() - started) / 1000;
      const firing = alerts.alerts().filter((a) => a.state === 'firing').length;
      for (const s of streams) if (s.lastError) throw new Error(`poll stream ${s.id} failed: ${s.lastError.message}`);
      return { records: handed, seconds, recordsPerSecond: handed / seconds, requests, rules: rules.length, evaluations, alertsFiring: firing, matchChecks: engine.matchChecks };
    },
  };
}
