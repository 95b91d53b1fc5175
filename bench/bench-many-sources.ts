import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { freePort } from '../test/helpers/free-port.js';
import { RedisServer } from '../test/helpers/redis-server.js';
import { bundleChild, firstLineOf } from './child-bundle.js';
import { cpuSeconds, procMemory } from './process-stats.js';
import { percentile } from './stats.js';

/** What the hundred-sources line measures (docs/high-availability.md sizes a deployment from it). */
export interface ManySourcesResult {
  sources: number;
  replicas: number;
  simulatorProcesses: number;
  transfersPerDay: number;
  minutes: number;
  intervalS: number;
  delayS: number;
  leaseTtlS: number;
  /** Every stream's lag (now − cursor) sampled every 2 s over the measurement, from the shared status. */
  lagSamples: number;
  lagP50S: number;
  lagP99S: number;
  lagMaxS: number;
  /** interval + delay + 5 s. */
  lagGoalS: number;
  /** Sources each replica polled at the end of the measurement, by replica name. */
  spread: Record<string, number>;
  leader: string;
  /** The leader's CPU over the measurement, in % of one core. */
  leaderCpuPercent: number;
  /** Peak RSS of each replica over the measurement (sampled every 2 s), MB. */
  rssMb: Record<string, number>;
  replicaRssMaxMb: number;
  failover: {
    victim: string;
    sources: number;
    /** From the kill until the last of the victim's sources had both streams polled by a survivor. */
    lastPolledAfterMs: number;
    /** lease_ttl + interval. */
    goalMs: number;
  };
}

export interface ManySourcesOptions {
  sources: number;
  minutes: number;
  /** Transfers a day over all sources (each source gets its share). */
  transfersPerDay: number;
  replicas?: number;
  simulatorProcesses?: number;
}

const SAMPLE_MS = 2_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const INTERVAL_S = 10;
const DELAY_S = 10;
const LEASE_TTL_S = 6;

const statusSchema = z.object({
  ha: z.object({ leader: z.string().nullable(), sources: z.record(z.string(), z.string().nullable()) }),
  sources: z.array(
    z.object({
      name: z.string(),
      streams: z.array(z.object({ stream: z.string(), cursor: z.string().nullable(), lastSuccessfulPoll: z.string().nullable() })),
    }),
  ),
});
type Status = z.infer<typeof statusSchema>;

interface Replica {
  name: string;
  proc: ChildProcess;
  url: string;
}

async function startSimulatorHosts(processes: number, sources: number, ratePerMinute: number): Promise<{ urls: string[]; close(): Promise<void> }> {
  const bundled = await bundleChild('bench/simulator-host-child.ts');
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const perHost = Math.ceil(sources / processes);
  try {
    for (let p = 0; p < processes && urls.length < sources; p++) {
      const count = Math.min(perHost, sources - urls.length);
      const child = spawn(process.execPath, [bundled.file, String(count), String(1000 + urls.length), String(ratePerMinute)], {
        cwd: bundled.root,
        // stdin a pipe: the child exits when it closes (this process gone: see exit-with-parent.ts).
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(child);
      urls.push(...z.array(z.string()).parse(JSON.parse(await firstLineOf(child))));
    }
  } catch (err) {
    for (const c of children) c.kill('SIGKILL');
    bundled.remove();
    throw err;
  }
  return {
    urls,
    async close() {
      await Promise.all(
        children.map((c) => {
          const exited = new Promise((r) => c.once('exit', r));
          c.kill('SIGTERM');
          return exited;
        }),
      );
      bundled.remove();
    },
  };
}

/** A replica on its own port (its log is at warn, so its start line does not name it); ready once it answers. */
async function startReplica(cli: string, config: string, name: string): Promise<Replica> {
  const port = await freePort();
  const proc = spawn(process.execPath, [cli, 'run', '--config', config], { env: { ...process.env, REPLICA: name, LISTEN: `127.0.0.1:${port}` }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  let exited: number | null | undefined;
  proc.once('exit', (code) => (exited = code));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`replica ${name} exited during start (${exited})`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return { name, proc, url };
    if (Date.now() > deadline) throw new Error(`replica ${name} did not answer in 60 s`);
    await sleep(200);
  }
}

async function statusOf(replica: Replica): Promise<Status> {
  const res = await fetch(`${replica.url}/api/v1/status`, { signal: AbortSignal.timeout(10_000) });
  return statusSchema.parse(await res.json());
}

/**
 * The hundred-sources line (issue 25): `sources` services, each its own simulator on its own port, spread over
 * `simulatorProcesses` processes of their own; three real replicas (`transfer-watch run`) on Redis poll them.
 * Once every source has a holder and a first poll, for `minutes`: every stream's lag from the shared status,
 * every replica's RSS and the leader's CPU. Then one replica that is not the leader is killed (-9), and the
 * time until a survivor has polled every one of its sources (both streams) is measured.
 */
export async function measureManySources(cli: string, opts: ManySourcesOptions): Promise<ManySourcesResult> {
  const replicaCount = opts.replicas ?? 3;
  const simulatorProcesses = opts.simulatorProcesses ?? Math.min(4, opts.sources);
  const ratePerMinute = opts.transfersPerDay / opts.sources / 1440;
  const redis = await RedisServer.start();
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-bench-sources-'));
  const hosts = await startSimulatorHosts(simulatorProcesses, opts.sources, ratePerMinute);
  const replicas = new Map<string, Replica>();
  try {
    const names = hosts.urls.map((_, i) => `s${String(i).padStart(3, '0')}`);
    const config = path.join(dir, 'config.yaml');
    writeFileSync(
      config,
      stringify({
        sources: hosts.urls.map((url, i) => ({ name: names[i], base_url: url, username: 'demo', password: 'demo' })),
        poll: { interval: `${INTERVAL_S}s`, success_interval: `${INTERVAL_S}s`, delay: `${DELAY_S}s`, initial_lookback: '2m' },
        server: { listen: '${LISTEN}' },
        log: { level: 'warn' },
        ha: { redis: { url: redis.url }, lease_ttl: `${LEASE_TTL_S}s`, replica_name: '${REPLICA}' },
      }),
    );
    for (let i = 0; i < replicaCount; i++) {
      const name = String.fromCharCode(97 + i);
      replicas.set(name, await startReplica(cli, config, name));
    }
    const first = [...replicas.values()][0];
    if (!first) throw new Error('no replica');

    // Settled: every source held, every stream polled once, the spread even (leases rebalance as replicas join).
    const settleBy = Date.now() + 120_000;
    for (;;) {
      const s = await statusOf(first).catch(() => undefined);
      const holders = s ? Object.values(s.ha.sources) : [];
      const counts = countBy(holders);
      const polled = s?.sources.every((src) => src.streams.length === 2 && src.streams.every((st) => st.cursor !== null)) ?? false;
      if (s && holders.length === opts.sources && holders.every((h) => h !== null) && polled && Math.max(...counts.values()) - Math.min(...counts.values()) <= 1 && counts.size === replicaCount) break;
      if (Date.now() > settleBy) throw new Error(`sources did not settle over the replicas in 120 s: ${JSON.stringify(Object.fromEntries(counts))}`);
      await sleep(1_000);
    }

    const lags: number[] = [];
    const peakRss = new Map<string, number>();
    let leader = '';
    let leaderCpuStart = 0;
    const started = Date.now();
    let lastStatus: Status | undefined;
    while (Date.now() - started < opts.minutes * 60_000) {
      const s = await statusOf(first);
      const now = Date.now();
      lastStatus = s;
      for (const src of s.sources) for (const st of src.streams) if (st.cursor) lags.push((now - Date.parse(st.cursor)) / 1000);
      for (const r of replicas.values()) if (r.proc.pid) peakRss.set(r.name, Math.max(peakRss.get(r.name) ?? 0, procMemory(r.proc.pid)?.rss ?? 0));
      if (!leader && s.ha.leader) {
        leader = s.ha.leader;
        const pid = replicas.get(leader)?.proc.pid;
        if (pid) leaderCpuStart = cpuSeconds(pid);
      }
      await sleep(SAMPLE_MS);
    }
    const leaderPid = replicas.get(leader)?.proc.pid;
    const leaderCpuPercent = leaderPid ? (100 * (cpuSeconds(leaderPid) - leaderCpuStart)) / ((Date.now() - started) / 1000) : 0;
    const spread = Object.fromEntries(countBy(Object.values(lastStatus?.ha.sources ?? {}).filter((h): h is string => h !== null)));

    // kill -9 of a replica that polls sources but does not lead.
    const victim = [...replicas.values()].find((r) => r.name !== leader);
    const survivor = [...replicas.values()].find((r) => r !== victim);
    if (!victim || !survivor) throw new Error('no replica to kill');
    const before = await statusOf(survivor);
    const victimSources = Object.entries(before.ha.sources).filter(([, h]) => h === victim.name).map(([n]) => n);
    const exited = new Promise((r) => victim.proc.once('exit', r));
    const killedAt = Date.now();
    victim.proc.kill('SIGKILL');
    await exited;
    replicas.delete(victim.name);
    let lastPolledAfterMs = 0;
    for (;;) {
      const s = await statusOf(survivor).catch(() => undefined);
      if (s) {
        const waiting = victimSources.filter((name) => {
          const holder = s.ha.sources[name];
          const streams = s.sources.find((src) => src.name === name)?.streams ?? [];
          return !holder || holder === victim.name || streams.length < 2 || streams.some((st) => !st.lastSuccessfulPoll || Date.parse(st.lastSuccessfulPoll) <= killedAt);
        });
        if (waiting.length === 0) {
          lastPolledAfterMs = Date.now() - killedAt;
          break;
        }
      }
      if (Date.now() - killedAt > 120_000) throw new Error(`the killed replica's sources were not polled again within 120 s`);
      await sleep(250);
    }

    const sorted = [...lags].sort((x, y) => x - y);
    return {
      sources: opts.sources,
      replicas: replicaCount,
      simulatorProcesses,
      transfersPerDay: opts.transfersPerDay,
      minutes: opts.minutes,
      intervalS: INTERVAL_S,
      delayS: DELAY_S,
      leaseTtlS: LEASE_TTL_S,
      lagSamples: lags.length,
      lagP50S: percentile(sorted, 50),
      lagP99S: percentile(sorted, 99),
      lagMaxS: sorted[sorted.length - 1] ?? 0,
      lagGoalS: INTERVAL_S + DELAY_S + 5,
      spread,
      leader,
      leaderCpuPercent,
      rssMb: Object.fromEntries(peakRss),
      replicaRssMaxMb: Math.max(0, ...peakRss.values()),
      failover: { victim: victim.name, sources: victimSources.length, lastPolledAfterMs, goalMs: (LEASE_TTL_S + INTERVAL_S) * 1000 },
    };
  } finally {
    for (const r of replicas.values()) r.proc.kill('SIGKILL');
    await hosts.close();
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

function countBy(values: Array<string | null>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}
