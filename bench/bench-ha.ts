import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { AlertStore } from '../src/alerts/alert-store.js';
import { pollSchema } from '../src/config/schema.js';
import { LeaseCoordinator } from '../src/ha/lease-coordinator.js';
import { LEADER_LEASE, sourceLease, type Coordinator } from '../src/cluster/cluster.js';
import { LocalCoordinator } from '../src/cluster/local-coordinator.js';
import { LocalTransferBus } from '../src/cluster/local-transfer-bus.js';
import type { TransferBus } from '../src/cluster/transfer-bus.js';
import { RedisStateStore } from '../src/ha/redis-state-store.js';
import { SourcePollState } from '../src/cluster/source-poll-state.js';
import { RedisTransferBus } from '../src/ha/transfer-bus.js';
import { PollStream } from '../src/poller/poll-stream.js';
import type { StreamKind } from '../src/poller/stream-kind.js';
import { RuleEngine } from '../src/rules/rule-engine.js';
import type { RuleDefinition } from '../src/rules/registry.js';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { TransferHistoryClient } from '../src/source/transfer-history-client.js';
import { FileStateStore } from '../src/state/file-state-store.js';
import { MemoryStateStore, type StateStore } from '../src/state/state-store.js';
import { ManualClock, systemClock } from '../src/util/clock.js';
import { silentLogger } from '../src/util/logger.js';
import { RedisServer } from '../test/helpers/redis-server.js';
import { benchSource, EVALUATE_EVERY, type BenchHistory } from './bench-pipeline.js';
import { percentile } from './stats.js';

export interface HaThroughputResult {
  records: number;
  fileRecordsPerSecond: number;
  redisRecordsPerSecond: number;
  /** Redis state (poller → stream → leader) over file state (poller → rules in one process); goal >= 0.9. */
  ratio: number;
}

export interface FailoverResult {
  kills: number;
  leaseTtlMs: number;
  pollIntervalMs: number;
  gapsMs: number[];
  p50Ms: number;
  p99Ms: number;
  /** lease_ttl + poll.interval + 2 s. */
  goalMs: number;
}

const STREAMS: readonly StreamKind[] = ['failures', 'successes'];

/**
 * One source's ingestion as the daemon runs it, with rules at the end: in one process with its cursors in
 * files (`file`), or as two HA roles on Redis (`redis`): the poller commits each window to the transfer
 * stream, the leader reads the stream into the rules. Windows of one minute, as live polling has, so commits
 * and reads interleave. Returns transfers per second through the rules.
 */
async function ingest(h: BenchHistory, rules: RuleDefinition[], mode: 'file' | 'redis', redis?: { url: string }): Promise<{ records: number; seconds: number }> {
  const logger = silentLogger();
  const span = h.end - h.start;
  const poll = pollSchema.parse({ delay: '0s', initial_lookback: `${span}ms`, max_window: '60s' });
  const dataClock = new ManualClock(h.start);
  const engine = new RuleEngine(rules, { clock: dataClock, logger, sources: ['bench'] });
  const alerts = new AlertStore({ clock: dataClock, logger, state: new MemoryStateStore() });
  let observed = 0;
  const observe = (t: Parameters<RuleEngine['observe']>[0]): void => {
    if (t.time > dataClock.now()) dataClock.set(t.time);
    engine.observe(t);
    if (++observed % EVALUATE_EVERY === 0) alerts.apply(engine.evaluate(dataClock.now(), { completeUntil: () => dataClock.now() }), dataClock.now());
  };
  const client = new TransferHistoryClient({ source: benchSource(h.url), logger });
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-bench-ha-'));
  const conns: Redis[] = [];
  try {
    let store: StateStore;
    let bus: TransferBus;
    let coordinator: Coordinator;
    let handed = 0;
    let done = false;
    if (mode === 'file') {
      // A single node: the cluster of one's in-memory bus and cursors in state.dir, as the daemon runs it.
      const files = new FileStateStore(dir, logger, systemClock);
      await files.init();
      const local = new LocalCoordinator({
        replica: 'bench',
        sources: ['bench'],
        events: { onLeaseAcquired: () => undefined, onLeaseReleasing: () => Promise.resolve(), onLeaseLost: () => undefined },
      });
      await local.start();
      coordinator = local;
      store = files;
      bus = new LocalTransferBus(files);
    } else {
      const prefix = `bench${Date.now()}:`;
      const conn = (): Redis => {
        const c = new Redis(redis?.url ?? '', { maxRetriesPerRequest: 1 });
        conns.push(c);
        return c;
      };
      const commands = conn();
      const leases = new LeaseCoordinator({ redis: commands, prefix, replica: 'bench', ttlMs: 60_000, sources: ['bench'], logger, onAcquired: () => undefined, onLost: () => undefined });
      await leases.heartbeat();
      coordinator = leases;
      store = new RedisStateStore({ redis: commands, prefix }).scoped('source.bench', () => leases.fence(sourceLease('bench')));
      bus = new RedisTransferBus(commands, conn(), prefix);
    }
    if (!coordinator.holds(sourceLease('bench')) || !coordinator.holds(LEADER_LEASE)) throw new Error('bench replica did not get its leases');
    const pollState = new SourcePollState({
      source: 'bench',
      writer: bus.writer('bench'),
      store,
      fence: () => coordinator.fence(sourceLease('bench')),
      progress: () => [],
    });
    const state: StateStore = pollState;
    const sink = (t: Parameters<RuleEngine['observe']>[0]): void => {
      handed++;
      pollState.add(t);
    };
    // The leading role's loop: read the bus in order, observe, mark what was read.
    const consume = async (): Promise<void> => {
      let last = await bus.consumed();
      while (!done || observed < handed) {
        const entries = await bus.read(last, done ? 5 : 200);
        for (const e of entries) if ('transfers' in e) for (const t of e.transfers) observe(t);
        if (entries.length > 0) {
          last = entries[entries.length - 1]?.id ?? last;
          await bus.markConsumed(coordinator.fence(LEADER_LEASE), last);
        }
      }
    };
    const streams: PollStream[] = STREAMS.map(
      (kind): PollStream =>
        new PollStream('bench', kind, undefined, {
          poll,
          tags: '',
          pager: client,
          clock: new ManualClock(h.end),
          logger,
          sink,
          hooks: {},
          save: (): Promise<void> => state.save('cursors', streams.map((s) => s.snapshot())),
        }),
    );
    const started = performance.now();
    const leader = consume();
    await Promise.all(streams.map((s) => s.runCycle()));
    done = true;
    await leader;
    return { records: observed, seconds: (performance.now() - started) / 1000 };
  } finally {
    for (const c of conns) c.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Transfers per second through the rules with Redis state against file state, the same slice, the same run. */
export async function measureHaThroughput(h: BenchHistory, rules: RuleDefinition[]): Promise<HaThroughputResult> {
  const redis = await RedisServer.start();
  try {
    await ingest({ ...h, end: h.start + 60_000 }, rules, 'file'); // warm-up
    const file = await ingest(h, rules, 'file');
    const viaRedis = await ingest(h, rules, 'redis', redis);
    const fileRate = file.records / file.seconds;
    const redisRate = viaRedis.records / viaRedis.seconds;
    return { records: viaRedis.records, fileRecordsPerSecond: fileRate, redisRecordsPerSecond: redisRate, ratio: redisRate / fileRate };
  } finally {
    await redis.kill();
  }
}

/**
 * The failover gap: two real replicas on Redis and the simulator; the replica polling the source is killed
 * (-9), and the gap runs until the other one has polled it successfully. Repeated `kills` times, restarting
 * the killed replica each time.
 */
export async function measureFailover(cli: string, kills: number): Promise<FailoverResult> {
  const leaseTtlMs = 2_000;
  const pollIntervalMs = 500;
  const redis = await RedisServer.start();
  const sim = await startSimulator({ seed: 11, scenario: 'steady', ratePerMinute: 600 });
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-bench-failover-'));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      sources: [{ name: 'mft', base_url: sim.url, username: 'demo', password: 'demo' }],
      poll: { interval: `${pollIntervalMs}ms`, success_interval: `${pollIntervalMs}ms`, delay: '200ms', initial_lookback: '2m' },
      server: { listen: '127.0.0.1:0' },
      ha: { redis: { url: redis.url }, lease_ttl: `${leaseTtlMs}ms`, replica_name: '${REPLICA}' },
    }),
  );
  const replicas = new Map<string, { proc: ReturnType<typeof spawn>; url: string }>();
  const start = async (name: string): Promise<void> => {
    const proc = spawn(process.execPath, [cli, 'run', '--config', config], { env: { ...process.env, REPLICA: name }, stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`replica ${name} did not start in 30 s`)), 30_000);
      proc.once('exit', () => clearTimeout(timer));
      let buffer = '';
      proc.stdout?.on('data', (d: Buffer) => {
        buffer += d.toString();
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(buffer);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.once('exit', () => reject(new Error(`replica ${name} exited during start`)));
    });
    proc.stdout?.resume();
    replicas.set(name, { proc, url });
  };
  const status = async (name: string): Promise<{ holder: string | null; lastPoll: number }> => {
    const r = replicas.get(name);
    const body = (await (await fetch(`${r?.url ?? ''}/api/v1/status`)).json()) as {
      ha: { sources: Record<string, string | null> };
      sources: Array<{ streams: Array<{ lastSuccessfulPoll: string | null }> }>;
    };
    const polls = body.sources.flatMap((s) => s.streams.map((st) => (st.lastSuccessfulPoll ? Date.parse(st.lastSuccessfulPoll) : 0)));
    return { holder: body.ha.sources['mft'] ?? null, lastPoll: polls.length > 0 ? Math.min(...polls) : 0 };
  };
  const gaps: number[] = [];
  try {
    await start('a');
    await start('b');
    for (let i = 0; i < kills; i++) {
      let holder: string | null = null;
      for (let w = 0; w < 100 && !holder; w++) {
        holder = (await status('a').catch(() => ({ holder: null }))).holder;
        if (!holder) await new Promise((r) => setTimeout(r, 100));
      }
      const victim = replicas.get(holder ?? '');
      const survivor = holder === 'a' ? 'b' : 'a';
      if (!victim || !holder) throw new Error('nobody polls the source');
      const exited = new Promise((r) => victim.proc.once('exit', r));
      const killedAt = Date.now();
      victim.proc.kill('SIGKILL');
      await exited;
      for (;;) {
        const s = await status(survivor).catch(() => undefined);
        if (s && s.holder === survivor && s.lastPoll > killedAt) break;
        if (Date.now() - killedAt > 30_000) throw new Error('no failover within 30 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      gaps.push(Date.now() - killedAt);
      await start(holder);
    }
  } finally {
    for (const r of replicas.values()) r.proc.kill('SIGKILL');
    await sim.close();
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  const sorted = [...gaps].sort((x, y) => x - y);
  return { kills, leaseTtlMs, pollIntervalMs, gapsMs: gaps, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), goalMs: leaseTtlMs + pollIntervalMs + 2_000 };
}
