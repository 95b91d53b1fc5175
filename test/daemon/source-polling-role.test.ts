import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceLease, type ClusterEvents } from '../../src/cluster/cluster.js';
import { LocalCluster } from '../../src/cluster/local-cluster.js';
import type { BusEntry, StreamProgress } from '../../src/cluster/transfer-bus.js';
import { configSchema } from '../../src/config/schema.js';
import { SourcePollingRole } from '../../src/daemon/roles/source-polling-role.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { EventLoopShare } from '../../src/util/time-slice.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { eventually } from '../helpers/daemon-process.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const noEvents: ClusterEvents = {
  onLeaseAcquired: () => undefined,
  onLeaseReleasing: () => Promise.resolve(),
  onLeaseLost: () => undefined,
  onStoreUp: () => undefined,
  onStoreReset: () => undefined,
  onSilencesChanged: () => undefined,
};

describe('the source polling role', () => {
  it("commits its last window with the source's progress when it hands the source over", async () => {
    const sim = await startSimulator({ generate: false, seed: 1, username: 'watch', password: 'pw' });
    cleanups.push(() => sim.close());
    sim.inject([{ DATAHORA: new Date(Date.now() - 60_000).toISOString(), EVENTO: 7, RESULTADO: 53, USUARIO: 'BANK1', NOMEARQUIVO: 'F.RET' }]);
    const dir = mkdtempSync(path.join(tmpdir(), 'tw-polling-role-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = configSchema.parse({
      sources: [{ name: 'prod', base_url: sim.url, username: 'watch', password: 'pw' }],
      poll: { interval: '200ms', success_interval: '0', delay: '0s', initial_lookback: '5m' },
      state: { dir },
    });
    // A cluster with no leader reading: the bus is read here, as the leader would.
    const cluster = await LocalCluster.open({ dir, sources: ['prod'], logger: silentLogger(), clock: systemClock, events: noEvents });
    cleanups.push(() => cluster.close());
    await cluster.coordinator.start();
    const metrics = new TransferWatchMetrics({ maxSeries: 1_000, version: 'test' });
    const role = new SourcePollingRole({
      cluster,
      clock: systemClock,
      logger: silentLogger(),
      loop: new EventLoopShare(),
      metrics,
      startedAt: Date.now(),
      config: () => config,
      onCycle: () => undefined,
    });
    const entries: BusEntry[] = [];
    let last = await cluster.bus.consumed();
    const readMore = async (): Promise<void> => {
      const got = await cluster.bus.read(last, 50);
      entries.push(...got);
      last = got.at(-1)?.id ?? last;
    };
    await role.start('prod');
    await eventually(async () => {
      await readMore();
      return entries.some((e) => 'transfers' in e);
    }, 10_000);

    const handingOver = role.handOver('prod');
    while (!(await Promise.race([handingOver.then(() => true), readMore().then(() => false)]))) {
      /* keep reading, as the leader does, so the last commit is applied */
    }
    await readMore();
    const markers = entries.filter((e): e is { id: string; progress: StreamProgress[] } => 'progress' in e);
    // Every marker, the hand-over's last one included, says how far the source's stream is read.
    expect(markers.length).toBeGreaterThan(0);
    for (const m of markers) expect(m.progress.map((p) => p.stream)).toEqual(['prod/failures']);
    expect(markers.at(-1)?.progress[0]?.cursor).toEqual(expect.any(Number));
    expect(cluster.coordinator.holds(sourceLease('prod'))).toBe(true);
    expect(cluster.board.get('streams:prod')).toBeUndefined();

    // The lease comes back (a rebalance): polling resumes, and the source's poll histogram is not zeroed again.
    const polls = async (): Promise<number> => Number(/transfer_watch_poll_duration_seconds_count\{source="prod",stream="failures"\} (\d+)/.exec(await metrics.metrics())?.[1]);
    const before = await polls();
    expect(before).toBeGreaterThan(0);
    await role.start('prod');
    expect(await polls()).toBeGreaterThanOrEqual(before);
    await role.stopAll(1_000);
  });
});
