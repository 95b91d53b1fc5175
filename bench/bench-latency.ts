import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { percentile } from './stats.js';

export interface LatencyResult {
  trials: number;
  pollIntervalMs: number;
  delayMs: number;
  groupWaitMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** poll interval + delay + group_wait + 1 s: the goal for p99. */
  goalMs: number;
}

const POLL_INTERVAL_MS = 1000;
const DELAY_MS = 1000;
const GROUP_WAIT_MS = 0;
const TRIAL_TIMEOUT_MS = 20_000;

/** A webhook receiver that notes when each alert's user first arrived (wall clock, ms). */
async function startReceiver(): Promise<{ url: string; arrivals: Map<string, number>; close(): Promise<void> }> {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { alerts?: Array<{ labels?: Record<string, string> }> };
        for (const a of body.alerts ?? []) {
          const user = a.labels?.['user'];
          if (user && !arrivals.has(user)) arrivals.set(user, at);
        }
      } catch {
        // Not ours to judge here: a malformed payload simply never counts as an arrival.
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A failure appears in the API → the webhook receiver has it. The real daemon (`transfer-watch run`, built
 * CLI) polls the simulator (no generated history, control API) every second; each trial injects one failure
 * stamped "now" for a user of its own (its own alert group, so it notifies) at a random moment of the poll
 * cycle, and waits until the webhook arrives.
 */
export async function measureLatency(cli: string, trials: number): Promise<LatencyResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-bench-latency-'));
  const sim = await startSimulator({ generate: false, control: true });
  const receiver = await startReceiver();
  const rulesFile = path.join(dir, 'rules.yaml');
  writeFileSync(
    rulesFile,
    stringify({ rules: [{ name: 'BenchLatency', type: 'error_burst', match: { user: ['LAT*'] }, group_by: ['user'], threshold: 1, window: '10m' }] }),
  );
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    stringify({
      sources: [{ name: 'bench', base_url: sim.url, username: 'demo', password: 'demo' }],
      poll: { interval: `${POLL_INTERVAL_MS}ms`, success_interval: '0s', delay: `${DELAY_MS}ms`, initial_lookback: '1m' },
      state: { dir: path.join(dir, 'state') },
      rule_files: [rulesFile],
      receivers: [{ name: 'hook', webhook: { url: receiver.url } }],
      route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: `${GROUP_WAIT_MS}s`, group_interval: '1m', repeat_interval: '4h' },
      server: { listen: '127.0.0.1:0' },
      log: { level: 'info' },
    }),
  );
  const daemon = spawn(process.execPath, [cli, 'run', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  daemon.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`daemon did not start: ${stderr}`)), 30_000);
      daemon.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('HTTP server listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
      daemon.once('exit', (code) => reject(new Error(`daemon exited with ${code}: ${stderr}`)));
    });
    // Let the first cycles (the initial look-back) pass, so trials measure the steady state.
    await sleep(2 * POLL_INTERVAL_MS);
    const latencies: number[] = [];
    for (let i = 0; i < trials; i++) {
      const user = `LAT${i}`;
      await sleep(Math.random() * POLL_INTERVAL_MS);
      const injectedAt = Date.now();
      sim.inject([{ DATAHORA: new Date(injectedAt).toISOString(), USUARIO: user, INSTANCE: 'PROD01', EVENTO: 7, RESULTADO: 21, NOMEARQUIVO: `/in/${user}/RET_${i}.RET` }]);
      const deadline = injectedAt + TRIAL_TIMEOUT_MS;
      while (!receiver.arrivals.has(user)) {
        if (Date.now() > deadline) throw new Error(`trial ${i}: no webhook within ${TRIAL_TIMEOUT_MS} ms; daemon stderr: ${stderr}`);
        await sleep(5);
      }
      latencies.push((receiver.arrivals.get(user) as number) - injectedAt);
    }
    return {
      trials,
      pollIntervalMs: POLL_INTERVAL_MS,
      delayMs: DELAY_MS,
      groupWaitMs: GROUP_WAIT_MS,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      goalMs: POLL_INTERVAL_MS + DELAY_MS + GROUP_WAIT_MS + 1000,
    };
  } finally {
    if (daemon.exitCode === null && daemon.signalCode === null) {
      const exited = new Promise((resolve) => daemon.once('exit', resolve));
      daemon.kill('SIGTERM');
      const timer = setTimeout(() => daemon.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await receiver.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
