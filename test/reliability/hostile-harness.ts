import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import { eventually } from '../helpers/daemon-process.js';
import { recordResult, sleep, startDaemonProcess, startWebhook, tally, tempDir, writeYaml, type DaemonProcess, type Webhook } from './harness.js';

/**
 * Shared parts of the hostile scenarios (issue 23): a daemon polling the simulator every second with one
 * legitimate error burst to notify (the "nothing lost that was not hostile" check), a prober of `/healthz`, and
 * a sampler of the daemon's RSS. The bounds every scenario asserts while its attack runs.
 */
export const HEALTH_P99_BOUND_MS = 1_000;
export const RSS_BOUND_MB = 300;

/** 44 characters, as in the probe that froze the daemon with a silence matcher. */
export const PARTNER = 'PARTNER_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const LEGIT_KEY = `firing:HostileBurst{user=${PARTNER}}`;

export interface HostileSetup {
  sim: RunningSimulator;
  webhook: Webhook;
  daemon: DaemonProcess;
  configFile: string;
  stateDir: string;
  cleanup(): Promise<void>;
}

/** Three failures of PARTNER in the last minute: one HostileBurst to notify. */
export function injectLegitBurst(sim: RunningSimulator): void {
  const now = Date.now();
  sim.inject(
    [0, 1, 2].map((i) => ({
      DATAHORA: new Date(now - 60_000 + i * 10_000).toISOString(),
      USUARIO: PARTNER,
      EVENTO: 7,
      RESULTADO: 21,
      NOMEARQUIVO: `/in/${PARTNER}/RET_${i}.RET`,
      MENSAGEM: 'remote closed the connection',
    })),
  );
}

export async function startHostileSetup(
  name: string,
  opts: {
    extraConfig?: Record<string, unknown>;
    extraRules?: unknown[];
    webConfigFile?: string;
    env?: NodeJS.ProcessEnv;
    /** Runs on the state folder before the daemon starts (a history database filled beforehand). */
    prepare?: (stateDir: string) => Promise<void>;
    /** A generated history behind the injected burst (none by default). */
    history?: { ratePerMinute: number; historyDays: number };
  } = {},
): Promise<HostileSetup> {
  const tmp = tempDir(`hostile-${name}`);
  const sim = await startSimulator({ seed: 23, control: false, ...(opts.history ? { generate: true, ...opts.history } : { generate: false }) });
  const webhook = await startWebhook();
  injectLegitBurst(sim);
  const rules = writeYaml(join(tmp.dir, 'rules.yaml'), {
    rules: [
      {
        name: 'HostileBurst',
        type: 'error_burst',
        match: { user: ['PARTNER_*'] },
        group_by: ['user'],
        threshold: 3,
        window: '10m',
        severity: 'critical',
      },
      ...(opts.extraRules ?? []),
    ],
  });
  const stateDir = join(tmp.dir, 'state');
  const configFile = writeYaml(join(tmp.dir, 'config.yaml'), {
    sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo', timeout: '5s' }],
    poll: { interval: '1s', success_interval: '1s', delay: '1s', initial_lookback: '5m' },
    state: { dir: stateDir },
    rule_files: [rules],
    receivers: [{ name: 'hook', webhook: { url: webhook.url } }],
    route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
    server: { listen: '127.0.0.1:0', ...(opts.webConfigFile ? { web_config_file: opts.webConfigFile } : {}) },
    log: { level: 'info' },
    ...opts.extraConfig,
  });
  await opts.prepare?.(stateDir);
  const daemon = await startDaemonProcess(configFile, { ...(opts.env ? { env: opts.env } : {}) });
  return {
    sim,
    webhook,
    daemon,
    configFile,
    stateDir,
    cleanup: async () => {
      await daemon.kill('SIGKILL');
      await webhook.close();
      await sim.close();
      tmp.cleanup();
    },
  };
}

/** GET a URL once; the latency in ms (a failure or a timeout counts as the timeout). */
export function timedGet(url: string, timeoutMs = 5_000, ca?: Buffer): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number): void => resolve({ ms: status === 0 ? timeoutMs : performance.now() - started, status });
    const lib = url.startsWith('https:') ? https : http;
    const req = lib.get(url, { agent: false, timeout: timeoutMs, ...(ca ? { ca } : {}) }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', () => done(0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
  });
}

/**
 * The prober's thread: GET /healthz every 100 ms on a new connection until told to stop, then the latencies. On the
 * test's own event loop it measured the test too: the simulator there serialises the hostile pages (20 MB of one
 * record each poll), and its stalls were counted as the daemon's (a p99 of 1,036 ms on a loaded CI machine).
 */
const PROBE_WORKER = `
const http = require('node:http');
const https = require('node:https');
const { parentPort, workerData } = require('node:worker_threads');
const { url, ca } = workerData;
let running = true;
parentPort.once('message', () => { running = false; });
const get = () => new Promise((resolve) => {
  const started = performance.now();
  const done = (status) => resolve({ ms: status === 0 ? 5000 : performance.now() - started, status });
  const lib = url.startsWith('https:') ? https : http;
  const req = lib.get(url, { agent: false, timeout: 5000, ...(ca ? { ca: Buffer.from(ca) } : {}) }, (res) => {
    res.resume();
    res.on('end', () => done(res.statusCode || 0));
    res.on('error', () => done(0));
  });
  req.on('timeout', () => req.destroy());
  req.on('error', () => done(0));
});
(async () => {
  const latencies = [];
  let failed = 0;
  while (running) {
    const r = await get();
    latencies.push(r.ms);
    if (r.status !== 200) failed += 1;
    await new Promise((res) => setTimeout(res, 100));
  }
  parentPort.postMessage({ latencies, failed });
})();
`;

/** Probes `/healthz` every 100 ms (a new connection each time, from a thread of its own) until stopped; p99 and the worst of the latencies. */
export function probeHealth(baseUrl: string, ca?: Buffer): { stop(): Promise<{ p99: number; max: number; samples: number; failed: number }> } {
  const worker = new Worker(PROBE_WORKER, { eval: true, workerData: { url: `${baseUrl}/healthz`, ca: ca ? new Uint8Array(ca) : undefined } });
  const result = new Promise<{ latencies: number[]; failed: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const { latencies, failed } = await result;
      await worker.terminate();
      const sorted = [...latencies].sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? Number.POSITIVE_INFINITY;
      return { p99, max: sorted[sorted.length - 1] ?? 0, samples: sorted.length, failed };
    },
  };
}

/** Samples the daemon's resident memory from /proc every 250 ms; the peak in MB. */
export function sampleRss(pid: number): { stop(): number } {
  let peak = 0;
  const read = (): void => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m?.[1]) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      /* the process ended */
    }
  };
  read();
  const timer = setInterval(read, 250);
  return {
    stop: () => {
      clearInterval(timer);
      read();
      return Math.round(peak * 10) / 10;
    },
  };
}

/** Runs `attack` for `ms` while probing health and sampling RSS. */
export async function underAttack(
  daemon: DaemonProcess,
  ms: number,
  attack: (signal: AbortSignal) => Promise<void>,
  ca?: Buffer,
): Promise<{ health: { p99: number; max: number; samples: number; failed: number }; rssMb: number }> {
  const rss = sampleRss(daemon.proc.pid ?? 0);
  const probe = probeHealth(daemon.url, ca);
  const ac = new AbortController();
  const running = attack(ac.signal);
  await new Promise((r) => setTimeout(r, ms));
  ac.abort();
  await running;
  const health = await probe.stop();
  return { health, rssMb: rss.stop() };
}

/** Waits for the legitimate burst's notification (and a little more, for any repeat) and tallies it. */
export async function legitDelivered(s: HostileSetup, timeoutMs = 30_000): Promise<ReturnType<typeof tally>> {
  await eventually(() => s.webhook.keys().includes(LEGIT_KEY), timeoutMs);
  await sleep(1_500);
  return tally([LEGIT_KEY], s.webhook.keys());
}

/** A row of the suite's table, with the scenario's /healthz p99 and peak RSS in its faults column. */
export function reportHostile(scenario: string, faults: string, t: ReturnType<typeof tally>, r: { health: { p99: number }; rssMb: number }): void {
  const note = `healthz p99 ${Math.round(r.health.p99)} ms, RSS ${r.rssMb} MB`;
  console.log(`${scenario}: ${faults}; ${note}`);
  recordResult({ scenario, faults: `${faults}; ${note}`, ...t });
}
