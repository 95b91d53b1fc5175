import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { RATE_PER_MINUTE } from './dense-history.js';
import { procMemory } from './process-stats.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ShippedRulesResult {
  /** Records the daemon had read when the backfill ended (its own `transfer_watch_records_total`). */
  records: number;
  seconds: number;
  recordsPerSecond: number;
  /** Peak RSS of the daemon process over the run (the kernel's VmHWM), MB. */
  peakRssMb: number;
  /** RSS at a quarter, half, three quarters and the end of the backfill's time, MB. */
  quarterRssMb: number[];
  /** RSS once the daemon listened, before the backfill, MB. */
  startRssMb: number;
  ruleFiles: string[];
  nodeFlags: string[];
  nodeVersion: string;
}

/** A webhook receiver that accepts everything (the daemon's deliveries are part of the run, not measured). */
async function startSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The daemon's listening URL, from its start-up log line. */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d: Buffer): void => {
      buffer += d.toString();
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(buffer);
      if (m?.[1]) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(m[1]);
      } else if (buffer.length > 1_000_000) buffer = buffer.slice(-10_000);
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before it listened`)));
  });
}

/** Sum of every sample of a metric family in a Prometheus text exposition. */
function sumOf(exposition: string, name: string): number {
  let sum = 0;
  for (const m of exposition.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/**
 * The real thing: the built daemon (`transfer-watch run`, a child process, no flags unless `nodeFlags`) with the
 * example configuration's poll settings and every file in `rules/`, on its first start, backfilling `records` of
 * the bench's dense history (10,000 transfers a minute, the simulator in this process on the wall clock, so the
 * history ends now and keeps coming). RSS is read from /proc/<pid>/status; progress from the daemon's own
 * `/metrics`. The backfill ends when the daemon has read the whole look-back.
 */
export async function measureShippedRules(
  cli: string,
  records: number,
  nodeFlags: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
  /** Called with the daemon still running after the backfill, e.g. to signal it for a heap snapshot while profiling. */
  afterBackfill?: (pid: number, url: string) => Promise<void>,
  /** The node binary that runs the daemon (another version than the bench's, e.g. Node 24 from npm). */
  node: string = process.execPath,
): Promise<ShippedRulesResult> {
  const minutes = records / RATE_PER_MINUTE;
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-bench-shipped-'));
  // The poll delay: the look-back that the first start reads is [now - lookback, now - delay].
  const delayMs = 30_000;
  const lookbackMs = Math.round(minutes * 60_000) + delayMs;
  // History from a minute before the look-back reaches, so the look-back is full of it however late the daemon starts.
  const sim = await startSimulator({ seed: 7, scenario: 'steady', ratePerMinute: RATE_PER_MINUTE, historyStart: Date.now() - lookbackMs - 60_000, cachedMinutes: Math.ceil(minutes) + 15 });
  const sink = await startSink();
  const ruleFiles = readdirSync(path.join(root, 'rules')).filter((f) => f.endsWith('.yaml')).sort().map((f) => path.join(root, 'rules', f));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      sources: [{ name: 'prod', base_url: sim.url, username: 'demo', password: 'demo' }],
      // config.example.yaml's poll settings, with a look-back that reaches the start of the history.
      poll: { interval: '30s', success_interval: '60s', delay: `${delayMs}ms`, overlap: '2m', page_size: 1000, initial_lookback: `${lookbackMs}ms`, max_window: '1h', stale_after: '5m' },
      state: { dir: path.join(dir, 'state') },
      rule_files: ruleFiles,
      receivers: [{ name: 'hook', webhook: { url: sink.url } }],
      route: { receiver: 'hook', group_by: ['alertname', 'source', 'mft_instance'], group_wait: '30s', group_interval: '5m', repeat_interval: '4h' },
      server: { listen: '127.0.0.1:0' },
      log: { level: 'info' },
    }),
  );
  const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const child = spawn(node, [...nodeFlags, cli, 'run', '--config', config], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = child.pid as number;
  try {
    const url = await listeningUrl(child);
    const startRss = procMemory(pid)?.rss ?? 0;
    const started = Date.now();
    // RSS over time: the records counter moves a whole poll window at a time, so quarters are of the run's time.
    const samples: Array<{ at: number; rss: number }> = [];
    let read = 0;
    let lastRead = -1;
    let steadySince = Date.now();
    for (;;) {
      await new Promise((r) => setTimeout(r, 200));
      const mem = procMemory(pid);
      if (!mem) throw new Error('the daemon exited during the backfill');
      samples.push({ at: Date.now(), rss: mem.rss });
      const exposition = await (await fetch(`${url}/metrics`)).text();
      read = sumOf(exposition, 'transfer_watch_records_total');
      // The first start reads the look-back in windows, then polls live: done when the look-back is read and
      // both streams are within a poll cycle of now.
      const lags = [...exposition.matchAll(/^transfer_watch_data_lag_seconds\{[^}]*\} (\S+)$/gm)].map((m) => Number(m[1]));
      if (read !== lastRead) steadySince = Date.now();
      lastRead = read;
      if (read >= records * 0.98 && lags.length >= 2 && Math.max(...lags) < 120) break;
      if (Date.now() - steadySince > 180_000) throw new Error(`the backfill stalled at ${read} records`);
    }
    const ended = Date.now();
    const seconds = (ended - started) / 1000;
    const peak = procMemory(pid)?.hwm ?? 0;
    await afterBackfill?.(pid, url);
    const quarters = [1, 2, 3, 4].map((q) => samples.filter((s) => s.at <= started + ((ended - started) * q) / 4).at(-1)?.rss ?? 0);
    const mb = (n: number): number => Math.round(n * 10) / 10;
    return { records: read, seconds, recordsPerSecond: read / seconds, peakRssMb: mb(peak), quarterRssMb: quarters.map(mb), startRssMb: mb(startRss), ruleFiles: ruleFiles.map((f) => path.relative(root, f)), nodeFlags: [...nodeFlags], nodeVersion };
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
    await sink.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
