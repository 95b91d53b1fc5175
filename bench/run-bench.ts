/**
 * `npm run bench [-- --quick | --micro] [--out FILE]`: throughput, memory, scrape time, detection latency and
 * overlap cost of transfer-watch against the built-in simulator, as a table on stdout and as JSON
 * (bench/results.json by default). Goals and how to read each line: docs/benchmarks.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startSimulator, type RunningSimulator } from '../src/simulator/start-simulator.js';
import { ManualClock } from '../src/util/clock.js';
import { measureLatency, type LatencyResult } from './bench-latency.js';
import { measureOverlap, type OverlapResult } from './bench-overlap.js';
import { createPipeline, measureFetch, type BenchHistory, type PipelineResult, type ThroughputResult } from './bench-pipeline.js';
import { benchRules } from './bench-rules.js';
import { measureScrape, type ScrapeResult } from './bench-scrape.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(root, 'dist/cli/main.js');

interface Sizes {
  mode: 'full' | 'quick' | 'micro';
  throughputMinutes: number;
  /** The 1,000-rule line reads a shorter slice: it is the slowest, and its ratio does not need more. */
  manyRulesMinutes: number;
  backfillRecords: number;
  scrapes: number;
  latencyTrials: number;
  overlapMinutes: number;
}

const SIZES: Record<Sizes['mode'], Sizes> = {
  full: { mode: 'full', throughputMinutes: 20, manyRulesMinutes: 5, backfillRecords: 1_000_000, scrapes: 200, latencyTrials: 40, overlapMinutes: 240 },
  quick: { mode: 'quick', throughputMinutes: 3, manyRulesMinutes: 1, backfillRecords: 100_000, scrapes: 30, latencyTrials: 6, overlapMinutes: 60 },
  micro: { mode: 'micro', throughputMinutes: 0.5, manyRulesMinutes: 0.25, backfillRecords: 5_000, scrapes: 3, latencyTrials: 2, overlapMinutes: 5 },
};

/** Dense history: 10,000 transfers a minute, so 1,000,000 records is 100 minutes of it. */
const RATE_PER_MINUTE = 10_000;
/** A Monday morning, so daily statements and position files are in the history too. */
const HISTORY_START = Date.UTC(2026, 0, 5, 9, 0, 0);
const RULE_COUNTS = [10, 100, 1000] as const;
const SCRAPE_SERIES = 10_000;
const OVERLAP_RATE_PER_MINUTE = 200;

function parseArgs(argv: string[]): { sizes: Sizes; out: string } {
  let mode: Sizes['mode'] = 'full';
  let out = path.join(root, 'bench/results.json');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') mode = 'quick';
    else if (a === '--micro') mode = 'micro';
    else if (a === '--out' && argv[i + 1] !== undefined) out = path.resolve(argv[++i] as string);
    else {
      console.error(`usage: npm run bench -- [--quick | --micro] [--out FILE]  (unknown argument ${a})`);
      process.exit(2);
    }
  }
  return { sizes: SIZES[mode], out };
}

/** The simulator serving [HISTORY_START, + minutes) of dense history; its clock is fixed after the end. */
async function denseHistory(minutes: number): Promise<{ sim: RunningSimulator; history: BenchHistory }> {
  const end = HISTORY_START + Math.round(minutes * 60_000) - 1;
  const sim = await startSimulator({ seed: 7, scenario: 'steady', clock: new ManualClock(end + 60_000), ratePerMinute: RATE_PER_MINUTE, historyStart: HISTORY_START });
  return { sim, history: { url: sim.url, start: HISTORY_START, end } };
}

interface BackfillResult {
  records: number;
  seconds: number;
  requests: number;
  baselineRssMb: number;
  peakRssMb: number;
  quarterRssMb: number[];
  rememberedByRules: number;
}

/**
 * The backfill runs in a child process so its RSS is the pipeline's, not the simulator's; as plain JavaScript
 * bundled by esbuild (node_modules left external, as in dist/), because a TypeScript loader in the child would
 * add its own worker thread (~35 MB) to the RSS measured.
 */
async function measureBackfill(records: number, nodeFlags: readonly string[] = []): Promise<BackfillResult> {
  const { sim, history } = await denseHistory(records / RATE_PER_MINUTE);
  // Inside the repository, so the bundle's bare imports resolve from its node_modules (ESM ignores NODE_PATH).
  mkdirSync(path.join(root, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(path.join(root, 'node_modules/.cache/tw-bench-'));
  try {
    const bundle = path.join(dir, 'backfill-child.mjs');
    await build({ entryPoints: [path.join(root, 'bench/backfill-child.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: bundle, logLevel: 'error' });
    const input = JSON.stringify({ ...history, rules: 100, expectedRecords: records });
    const child = spawn(process.execPath, [...nodeFlags, bundle, input], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`backfill child exited with ${code}: ${stderr}`);
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as BackfillResult;
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The V8 flags the container image starts node with (its ENTRYPOINT, between `node` and the script), so the
 * backfill can be measured as the image runs it as well as with node's defaults.
 */
function imageNodeFlags(): string[] {
  const entry = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'))?.[1];
  const argv = entry ? (JSON.parse(entry) as string[]) : [];
  return argv.slice(1).filter((a) => a.startsWith('--'));
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  const { sizes, out } = parseArgs(process.argv.slice(2));
  if (!existsSync(CLI)) {
    console.error(`${CLI} is missing: run "npm run build" first (npm run bench does)`);
    process.exit(2);
  }
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  const step = (what: string): void => void process.stderr.write(`bench: ${what}...\n`);

  step(`throughput over ${sizes.throughputMinutes} min of dense history`);
  const { sim, history } = await denseHistory(sizes.throughputMinutes);
  let fetch: ThroughputResult;
  const pipelines: PipelineResult[] = [];
  const fetchOfSlice = new Map<number, ThroughputResult>();
  try {
    // A short warm-up run, so the first measured line does not pay for JIT compilation alone.
    await measureFetch({ ...history, end: history.start + Math.min(60_000, history.end - history.start) });
    fetch = await measureFetch(history);
    for (const n of RULE_COUNTS) {
      const slice = n >= 1000 ? { ...history, end: history.start + Math.round(sizes.manyRulesMinutes * 60_000) - 1 } : history;
      // Its own fetch line for the same slice, so the ratio compares like with like.
      if (slice !== history) fetchOfSlice.set(n, await measureFetch(slice));
      const pipeline = createPipeline(slice, benchRules(n));
      pipelines.push(await pipeline.run());
    }
  } finally {
    await sim.close();
  }
  step(`/metrics scrape with ${fmt(SCRAPE_SERIES)} series`);
  const scrape: ScrapeResult = await measureScrape(SCRAPE_SERIES, sizes.scrapes);
  step(`overlap cost over ${sizes.overlapMinutes} simulated minutes`);
  const overlap: OverlapResult = await measureOverlap(sizes.overlapMinutes, OVERLAP_RATE_PER_MINUTE);
  step(`peak RSS backfilling ${fmt(sizes.backfillRecords)} records`);
  const backfill = await measureBackfill(sizes.backfillRecords);
  const imageFlags = imageNodeFlags();
  step(`peak RSS backfilling ${fmt(sizes.backfillRecords)} records, node ${imageFlags.join(' ')} (as the image runs it)`);
  const backfillImage = await measureBackfill(sizes.backfillRecords, imageFlags);
  step(`detection latency, ${sizes.latencyTrials} trials`);
  const latency: LatencyResult = await measureLatency(CLI, sizes.latencyTrials);
  const loadAfter = loadavg();

  const p100 = pipelines.find((p) => p.rules === 100) as PipelineResult;
  const ratio = (p: PipelineResult): number => p.recordsPerSecond / (fetchOfSlice.get(p.rules) ?? fetch).recordsPerSecond;
  const rows: Array<[string, string, string]> = [
    ['fetch + parse only', `${fmt(fetch.recordsPerSecond)} records/s`, `${fmt(fetch.records)} records, ${fetch.requests} requests, ${fmt(fetch.seconds, 2)} s`],
    ...pipelines.map((p): [string, string, string] => [
      `full pipeline, ${fmt(p.rules)} rules`,
      `${fmt(p.recordsPerSecond)} records/s`,
      `ratio ${fmt(ratio(p), 2)} (goal >= ${p.rules >= 1000 ? '0.5' : '0.7'}), ${fmt(p.records)} records, ${p.evaluations} evaluations, ${p.alertsFiring} alerts firing`,
    ]),
    [
      `peak RSS, backfill`,
      `${fmt(backfill.peakRssMb, 1)} MB`,
      `${fmt(backfill.records)} records, 100 rules, node's default V8 flags (goal <= 150 MB); at each quarter: ${backfill.quarterRssMb.map((m) => fmt(m, 0)).join(' / ')} MB; at start ${fmt(backfill.baselineRssMb, 0)} MB`,
    ],
    [
      `peak RSS, backfill, image flags`,
      `${fmt(backfillImage.peakRssMb, 1)} MB`,
      `same, node ${imageFlags.join(' ')} as in the Dockerfile; ${fmt(backfillImage.seconds, 1)} s vs ${fmt(backfill.seconds, 1)} s; at each quarter: ${backfillImage.quarterRssMb.map((m) => fmt(m, 0)).join(' / ')} MB; at start ${fmt(backfillImage.baselineRssMb, 0)} MB`,
    ],
    ['/metrics scrape', `p50 ${fmt(scrape.p50Ms, 1)} ms, p99 ${fmt(scrape.p99Ms, 1)} ms`, `${fmt(scrape.series)} series, ${fmt(scrape.bytes / 1024, 0)} KiB, ${scrape.scrapes} scrapes (goal <= 50 ms)`],
    [
      'detection latency',
      `p50 ${fmt(latency.p50Ms)} ms, p99 ${fmt(latency.p99Ms)} ms`,
      `${latency.trials} trials, poll 1s, delay 1s, group_wait 0s (goal p99 <= ${fmt(latency.goalMs)} ms); max ${fmt(latency.maxMs)} ms`,
    ],
    [
      'overlap cost',
      `${fmt(overlap.requestsPer1000Records, 1)} requests / 1,000 records`,
      `${fmt(overlap.refetchedShare * 100, 1)}% of records fetched more than once, ${fmt(overlap.fetchesPerRecord, 2)} fetches per record (${overlap.simulatedMinutes} min at ${overlap.ratePerMinute}/min, default poll settings)`,
    ],
  ];
  const width = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))];
  console.log(`transfer-watch bench (${sizes.mode}) — node ${process.version}, ${cpus().length} cpus, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')} → ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(width[0] as number)}  ${b.padEnd(width[1] as number)}  ${c}`);

  const results = {
    mode: sizes.mode,
    startedAt,
    machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memoryGb: Math.round(totalmem() / 2 ** 30), loadBefore, loadAfter },
    fetch,
    pipelines: pipelines.map((p) => ({ ...p, ratioToFetch: ratio(p) })),
    backfill,
    backfillImageFlags: { nodeFlags: imageFlags, ...backfillImage },
    scrape,
    latency,
    overlap,
  };
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results written to ${path.relative(process.cwd(), out) || out}`);
  console.log(`pipeline_vs_fetch_ratio=${ratio(p100).toFixed(2)} rss_mb=${backfill.peakRssMb.toFixed(1)} records_per_s=${Math.round(p100.recordsPerSecond)}`);
}

await main();
