import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LEADER_LEASE, sourceLease, type ClusterEvents } from '../../src/cluster/cluster.js';
import { LocalCluster } from '../../src/cluster/local-cluster.js';
import { SourcePollState } from '../../src/cluster/source-poll-state.js';
import type { BusEntry } from '../../src/cluster/transfer-bus.js';
import { transferOf } from '../../src/source/record.js';
import type { ServiceRecord } from '../../src/source/transfer.js';
import { ManualClock } from '../../src/util/clock.js';
import { TransferWatchError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'tw-local-cluster-'));
  dirs.push(d);
  return d;
}

function events(log: string[], over: Partial<ClusterEvents> = {}): ClusterEvents {
  return {
    onLeaseAcquired: (lease) => void log.push(`+${lease}`),
    onLeaseReleasing: (lease) => Promise.resolve(void log.push(`~${lease}`)),
    onLeaseLost: (lease, why) => void log.push(`-${lease} (${why})`),
    onStoreUp: () => undefined,
    onStoreReset: () => undefined,
    onSilencesChanged: () => undefined,
    ...over,
  };
}

function transfer(n: number) {
  const record = { DATAHORA: new Date(1_700_000_000_000 + n).toISOString(), EVENTO: 7, RESULTADO: 0, NOMEARQUIVO: `F${n}.TXT`, USUARIO: 'BANK1', INSTANCE: 'PROD01' } as unknown as ServiceRecord;
  return transferOf(record, `id-${n}`, 'prod');
}

async function readAll(cluster: LocalCluster, after: string): Promise<BusEntry[]> {
  return cluster.bus.read(after, 10);
}

describe('a cluster of one', () => {
  it('grants the leader lease first and waits for its takeover before the sources are polled', async () => {
    const log: string[] = [];
    let takeOverDone = false;
    const cluster = await LocalCluster.open({
      dir: tempDir(),
      sources: ['prod', 'test'],
      logger: silentLogger(),
      clock: new ManualClock(0),
      events: events(log, {
        onLeaseAcquired: async (lease) => {
          log.push(`+${lease}${lease === LEADER_LEASE ? '' : takeOverDone ? ' (leader ready)' : ' (leader NOT ready)'}`);
          if (lease === LEADER_LEASE) {
            await new Promise((r) => setTimeout(r, 20));
            takeOverDone = true;
          }
        },
      }),
    });
    await cluster.coordinator.start();
    expect(log).toEqual(['+leader', '+source:prod (leader ready)', '+source:test (leader ready)']);
    expect(await cluster.coordinator.holders()).toEqual({ leader: cluster.replica, 'source:prod': cluster.replica, 'source:test': cluster.replica });
    expect(await cluster.coordinator.confirm(LEADER_LEASE)).toBe(true);
    // A reload that removes a source hands it over (its work finished while still held), then takes it away.
    await cluster.setSources(['prod']);
    expect(log.slice(3)).toEqual(['~source:test', '-source:test (its source was removed)']);
    expect(cluster.coordinator.fence(sourceLease('test'))).toBeUndefined();
    await cluster.close();
    expect(log.slice(5)).toEqual(['~source:prod', '-source:prod (given back at shutdown)', '~leader', '-leader (given back at shutdown)']);
  });

  it('hands transfers on at once, and a commit saves the cursors before its progress marker', async () => {
    const dir = tempDir();
    const cluster = await LocalCluster.open({ dir, sources: ['prod'], logger: silentLogger(), clock: new ManualClock(0), events: events([]) });
    await cluster.coordinator.start();
    const state = new SourcePollState({
      source: 'prod',
      writer: cluster.bus.writer('prod'),
      store: cluster.sourceStore('prod'),
      fence: () => cluster.coordinator.fence(sourceLease('prod')),
      progress: () => [{ stream: 'prod/failures', source: 'prod', result: 'error', cursor: 42 }],
    });
    const start = await cluster.bus.consumed();
    for (let i = 0; i < 3; i++) state.add(transfer(i));
    // Before any commit, the page's transfers are already on the bus (a page is one entry).
    const first = await readAll(cluster, start);
    expect(first.map((e) => ('transfers' in e ? e.transfers.map((t) => t.id) : 'progress'))).toEqual([['id-0', 'id-1', 'id-2']]);
    state.add(transfer(3));
    let committed = false;
    const saving = state.save('cursors', { 'prod/failures': { cursor: 42, seen: [] } }).then(() => {
      committed = true;
    });
    const second: BusEntry[] = [];
    let last = first.at(-1)?.id ?? start;
    while (!second.some((e) => 'progress' in e)) {
      const got = await readAll(cluster, last);
      second.push(...got);
      last = got.at(-1)?.id ?? last;
    }
    expect(second.map((e) => ('transfers' in e ? e.transfers.map((t) => t.id) : e.progress))).toEqual([['id-3'], [{ stream: 'prod/failures', source: 'prod', result: 'error', cursor: 42 }]]);
    // The commit returns once the leader has applied the window: when it comes back for more, not before.
    await new Promise((r) => setTimeout(r, 20));
    expect(committed).toBe(false);
    await readAll(cluster, last);
    await saving;
    expect(committed).toBe(true);
    expect(await cluster.sourceStore('prod').load('cursors')).toEqual({ 'prod/failures': { cursor: 42, seen: [] } });
    await cluster.close();
  });

  it('refuses a commit once the source lease is given back (named as fenced), and reads cursors saved before roles', async () => {
    const dir = tempDir();
    // A state.dir written by an earlier version: every source's cursors under one key.
    writeFileSync(path.join(dir, 'cursors.json'), JSON.stringify({ 'prod/failures': { cursor: 7, seen: [] } }));
    const cluster = await LocalCluster.open({ dir, sources: ['prod'], logger: silentLogger(), clock: new ManualClock(0), events: events([]) });
    expect(await cluster.sourceStore('prod').load('cursors')).toEqual({ 'prod/failures': { cursor: 7, seen: [] } });
    await cluster.coordinator.start();
    await cluster.setSources([]);
    const state = new SourcePollState({
      source: 'prod',
      writer: cluster.bus.writer('prod'),
      store: cluster.sourceStore('prod'),
      fence: () => cluster.coordinator.fence(sourceLease('prod')),
      progress: () => [],
    });
    const refused = await state.save('cursors', { 'prod/failures': { cursor: 8, seen: [] } }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TransferWatchError);
    expect((refused as TransferWatchError).code).toBe('ha_fenced');
    expect((refused as Error).message).toMatch(/fenced/);
    expect(JSON.parse(readFileSync(path.join(dir, 'cursors.json'), 'utf8'))).toEqual({ 'prod/failures': { cursor: 7, seen: [] } });
    await cluster.close();
  });
});
