import { spawn } from 'node:child_process';
import { z } from 'zod';
import { startHttpServer } from '../src/http/http-server.js';
import { TransferWatchMetrics } from '../src/metrics/transfer-watch-metrics.js';
import { parseRecord } from '../src/source/record.js';
import { silentLogger } from '../src/util/logger.js';
import { createPipeline, daemonWindows, type BenchHistory, type PipelineResult } from './bench-pipeline.js';
import { benchRules } from './bench-rules.js';
import { percentile } from './stats.js';
import { lastLineOfBundledChild } from './child-bundle.js';

export interface ScrapeResult {
  series: number;
  scrapes: number;
  bytes: number;
  p50Ms: number;
  p99Ms: number;
}

/** Series per instance below: 2 events × 2 results × (transfers, bytes, last timestamp) + 2 error series. */
const SERIES_PER_INSTANCE = 14;

/** Metrics holding about `targetSeries` series: instances × events × results, with error codes. */
export function seededMetrics(targetSeries: number): TransferWatchMetrics {
  const metrics = new TransferWatchMetrics({ maxSeries: 2 * targetSeries, version: 'bench' });
  const instances = Math.ceil(targetSeries / SERIES_PER_INSTANCE);
  const t0 = Date.UTC(2026, 0, 5);
  let n = 0;
  for (let i = 0; i < instances; i++) {
    for (const evento of [5, 7]) {
      for (const resultado of [0, 21]) {
        const parsed = parseRecord(
          { DATAHORA: new Date(t0 + n++ * 1000).toISOString(), INSTANCE: `MFT${String(i).padStart(5, '0')}`, USUARIO: 'BANK1', EVENTO: evento, NOMEARQUIVO: `/in/F${n}.RET`, RESULTADO: resultado, TAMARQUIVO: n },
          'bench',
        );
        if (!parsed.ok) throw new Error(parsed.reason);
        metrics.observeTransfer(parsed.transfer);
      }
    }
  }
  return metrics;
}

export function metricsServer(metrics: TransferWatchMetrics) {
  return startHttpServer({
    listen: '127.0.0.1:0',
    logger: silentLogger(),
    metrics,
    api: {
      ready: () => true,
      alerts: () => [],
      status: () => ({}),
      reload: () => Promise.resolve({ ok: true }),
      silences: { list: () => [], get: () => undefined, create: () => Promise.resolve({}), expire: () => Promise.resolve(false) },
    },
  });
}

export interface ScrapeUnderLoadResult extends ScrapeResult {
  /** The pipeline that ran meanwhile, in the same process. */
  records: number;
  recordsPerSecond: number;
  /** The last answer's size on the wire (gzipped). */
  wireBytes: number;
}

/**
 * The scraper of the line below, as its own process, as Prometheus is: in the benchmark's process its reading of
 * each 1 MB answer (~16 socket reads, each a turn of the event loop the backfill shares) was timed as the
 * daemon's. Like Prometheus it asks for gzip (Accept-Encoding: gzip) on a kept-alive connection and
 * inflates the answer in one go, as Go's reader does (undici's fetch inflates in 16 KiB steps through the thread
 * pool, which on two busy cores timed this process, not the daemon). It first scrapes WARM_UP_SCRAPES times untimed
 * and prints `ready` (Prometheus scrapes forever: its first scrape, with this process's code cold, is not the
 * steady state; it was the slowest of each run, 140–190 ms, by far). Then scrapes every `intervalMs` until its
 * stdin closes, and prints each timed scrape's time, series and bytes (as served, and inflated).
 */
const WARM_UP_SCRAPES = 3;
const SCRAPER = `
import { Agent, get } from 'node:http';
import { gunzipSync } from 'node:zlib';
const [url, intervalMs] = process.argv.slice(1);
let stop = false;
process.stdin.on('data', () => {}).on('end', () => { stop = true; });
const agent = new Agent({ keepAlive: true });
const scrapes = [];
for (let round = 0; !stop; round++) {
  const started = performance.now();
  const { status, wire, text } = await new Promise((resolve, reject) => {
    get(url, { agent, headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c)).on('error', reject).on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode, wire: body.length, text: (res.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8') });
      });
    }).on('error', reject);
  });
  if (status !== 200) throw new Error('/metrics answered ' + status);
  if (round < ${WARM_UP_SCRAPES}) {
    if (round === ${WARM_UP_SCRAPES} - 1) process.stdout.write('ready\\n');
    continue;
  }
  scrapes.push({ ms: performance.now() - started, series: text.split('\\n').filter((l) => l !== '' && !l.startsWith('#')).length, bytes: text.length, wireBytes: wire });
  await new Promise((r) => setTimeout(r, Number(intervalMs)));
}
process.stdout.write(JSON.stringify(scrapes));
`;

const scrapesSchema = z.array(z.object({ ms: z.number(), series: z.number(), bytes: z.number(), wireBytes: z.number() }));

/** Starts the scraper process; `ready` once its warm-up scrapes are done, `stop()` ends it and gives its timed scrapes. */
export function startScraper(url: string, intervalMs: number): { ready: Promise<void>; stop(): Promise<z.infer<typeof scrapesSchema>> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRAPER, url, String(intervalMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.startsWith('ready\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`the scraper process exited with ${code} before its warm-up scrapes`)));
  });
  ready.catch(() => undefined); // stop() reports the exit
  return {
    ready,
    async stop() {
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`the scraper process exited with ${code}`);
      return scrapesSchema.parse(JSON.parse(out.slice(out.indexOf('\n') + 1)));
    },
  };
}

/**
 * `/metrics` while a backfill runs in the same process (when people look: a scrape during catch-up): the
 * 100-rule pipeline reads the history, in windows of the daemon's default `poll.max_window` as the daemon reads a
 * catch-up, into the same metrics object that holds ~`targetSeries` series, and
 * `/metrics` is scraped every 100 ms (a tight Prometheus) from another process until it is done; each scrape is
 * timed to its last byte. The rules are evaluated as the daemon evaluates a catch-up (`daemon`: at most once a
 * second), or every 1,000 transfers as the throughput lines do (`transfers`: ~45 times a second here).
 * `backfills` backfills in a row, each on fresh metrics, their scrapes pooled: one backfill of a million records
 * from pre-serialised pages takes ~10 s here, ~80 scrapes, whose p99 would be their slowest one.
 */
export async function measureScrapeUnderLoad(targetSeries: number, history: BenchHistory, cadence: 'transfers' | 'daemon' = 'daemon', backfills = 1): Promise<ScrapeUnderLoadResult> {
  const times: number[] = [];
  let records = 0;
  let seconds = 0;
  let last: z.infer<typeof scrapesSchema>[number] | undefined;
  for (let i = 0; i < backfills; i++) {
    const metrics = seededMetrics(targetSeries);
    const server = await metricsServer(metrics);
    try {
      const pipeline = createPipeline(history, benchRules(100), daemonWindows(), undefined, metrics, cadence);
      const scraper = startScraper(`${server.url}/metrics`, 100);
      let result: PipelineResult;
      let scrapes: z.infer<typeof scrapesSchema>;
      try {
        await scraper.ready;
        result = await pipeline.run();
      } finally {
        scrapes = await scraper.stop();
      }
      times.push(...scrapes.map((s) => s.ms));
      last = scrapes.at(-1) ?? last;
      records += result.records;
      seconds += result.seconds;
    } finally {
      await server.close();
    }
  }
  return {
    series: last?.series ?? 0,
    scrapes: times.length,
    bytes: last?.bytes ?? 0,
    wireBytes: last?.wireBytes ?? 0,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    records,
    recordsPerSecond: records / seconds,
  };
}

const underLoadSchema = z.object({
  series: z.number(),
  scrapes: z.number(),
  bytes: z.number(),
  wireBytes: z.number(),
  p50Ms: z.number(),
  p99Ms: z.number(),
  records: z.number(),
  recordsPerSecond: z.number(),
});

/**
 * `measureScrapeUnderLoad` in a process of its own started as the daemon is: node with `nodeFlags` (the image's)
 * and the CLI's limits on V8's heap. In the benchmark's process V8 kept its defaults (a young generation of up to
 * 32 MB, the old space let grow 4× between full collections): fewer, different pauses than the daemon's.
 */
export async function measureScrapeUnderLoadAsDaemon(
  targetSeries: number,
  history: BenchHistory,
  cadence: 'transfers' | 'daemon',
  backfills: number,
  nodeFlags: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<ScrapeUnderLoadResult> {
  const input = JSON.stringify({ url: history.url, start: history.start, end: history.end, series: targetSeries, backfills, cadence });
  return underLoadSchema.parse(JSON.parse(await lastLineOfBundledChild('bench/scrape-child.ts', input, nodeFlags, env)));
}

/**
 * `GET /metrics` over real HTTP from the daemon's own server and metrics, holding about `targetSeries` series
 * (instances × events × results, with error codes), as many scrapes in a row as Prometheus would make over
 * hours. Each scrape is timed from request to the last byte.
 */
export async function measureScrape(targetSeries: number, scrapes: number): Promise<ScrapeResult> {
  const metrics = seededMetrics(targetSeries);
  const server = await metricsServer(metrics);
  try {
    const times: number[] = [];
    let series = 0;
    let bytes = 0;
    for (let i = 0; i < scrapes + 3; i++) {
      const started = performance.now();
      const res = await fetch(`${server.url}/metrics`);
      const text = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
      // The first scrapes warm the JIT; Prometheus scrapes forever, so steady state is what counts.
      if (i >= 3) times.push(ms);
      series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
      bytes = text.length;
    }
    return { series, scrapes, bytes, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
  } finally {
    await server.close();
  }
}
