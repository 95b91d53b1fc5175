import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NFLOG_RETENTION_MS, NFLOG_STATE_KEY, NotificationLog, type NflogEntry } from '../../../src/notify/dedup/nflog.js';
import { FileStateStore } from '../../../src/state/file-state-store.js';
import { MemoryStateStore } from '../../../src/state/state-store.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';

const T0 = Date.parse('2024-03-05T12:00:00Z');

function entry(seq: number, sentAt = T0): NflogEntry {
  return { firing: [`fp${seq}`], resolved: [], sentAt, seq };
}

describe('NotificationLog journal', () => {
  let dir: string;
  const stores: FileStateStore[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tw-nflog-'));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });
  async function fileState(): Promise<FileStateStore> {
    const s = new FileStateStore(dir, silentLogger(), new ManualClock(T0));
    await s.init();
    stores.push(s);
    return s;
  }

  it('each persist appends one record of what changed; a restart replays them and compacts', async () => {
    const state = await fileState();
    const log = new NotificationLog(state, silentLogger());
    await log.restore();
    log.set('a', entry(1));
    log.set('b', entry(2));
    await log.persist(T0);
    await log.persist(T0); // nothing changed: nothing appended
    log.set('a', entry(3));
    await log.persist(T0);
    expect(await state.journal(NFLOG_STATE_KEY)).toEqual([{ set: { a: entry(1), b: entry(2) } }, { set: { a: entry(3) } }]);
    expect(await state.load(NFLOG_STATE_KEY)).toBeUndefined();

    // Restart (no stop, as after kill -9).
    const state2 = await fileState();
    const restored = new NotificationLog(state2, silentLogger());
    await restored.restore();
    expect(restored.get('a')).toEqual(entry(3));
    expect(restored.get('b')).toEqual(entry(2));
    // The replayed journal became the snapshot.
    expect(await state2.journal(NFLOG_STATE_KEY)).toEqual([]);
    expect(await state2.load(NFLOG_STATE_KEY)).toEqual({ version: 1, entries: { a: entry(3), b: entry(2) } });
  });

  it('compacts after compactAfter records, keeping the journal short and the content whole', async () => {
    const state = await fileState();
    const log = new NotificationLog(state, silentLogger(), { compactAfter: 4 });
    for (let i = 1; i <= 10; i++) {
      log.set(`k${i % 3}`, entry(i));
      await log.persist(T0);
    }
    // Compacted after records 4 and 8: records 9 and 10 are in the journal.
    expect(await state.journal(NFLOG_STATE_KEY)).toHaveLength(2);
    expect((await readdir(dir)).filter((f) => f.startsWith('nflog.journal'))).toEqual(['nflog.journal']);
    const restored = new NotificationLog(await fileState(), silentLogger());
    await restored.restore();
    expect([restored.get('k0'), restored.get('k1'), restored.get('k2')]).toEqual([entry(9), entry(10), entry(8)]);
  });

  it('forgetting expired entries is journaled too', async () => {
    const state = new MemoryStateStore();
    const log = new NotificationLog(state, silentLogger());
    log.set('old', entry(1, T0));
    log.set('new', entry(2, T0 + NFLOG_RETENTION_MS));
    await log.persist(T0);
    await log.persist(T0 + NFLOG_RETENTION_MS + 1);
    expect(await state.journal(NFLOG_STATE_KEY)).toEqual([{ set: { old: entry(1, T0), new: entry(2, T0 + NFLOG_RETENTION_MS) } }, { delete: ['old'] }]);
    const restored = new NotificationLog(state, silentLogger());
    await restored.restore();
    expect(restored.get('old')).toBeUndefined();
    expect(restored.get('new')).toEqual(entry(2, T0 + NFLOG_RETENTION_MS));
  });

  it('reads a snapshot of the previous format and skips unreadable journal records', async () => {
    const state = new MemoryStateStore();
    await state.save(NFLOG_STATE_KEY, { version: 1, entries: { a: entry(1), bad: { seq: 'x' } } });
    await state.append(NFLOG_STATE_KEY, { set: { b: entry(2) } });
    await state.append(NFLOG_STATE_KEY, 'garbage');
    await state.append(NFLOG_STATE_KEY, { set: { a: entry(3) } });
    const log = new NotificationLog(state, silentLogger());
    await log.restore();
    expect([log.get('a'), log.get('b'), log.get('bad'), log.size]).toEqual([entry(3), entry(2), undefined, 2]);
  });

  it('an append that fails keeps the change for the next record', async () => {
    const real = new MemoryStateStore();
    let fail = true;
    const state = {
      load: (k: string) => real.load(k),
      save: (k: string, v: unknown) => real.save(k, v),
      journal: (k: string) => real.journal(k),
      append: (k: string, r: unknown) => (fail ? Promise.reject(new Error('disk full')) : real.append(k, r)),
    };
    const log = new NotificationLog(state, silentLogger());
    log.set('a', entry(1));
    await expect(log.persist(T0)).rejects.toThrow('disk full');
    fail = false;
    log.set('b', entry(2));
    await log.persist(T0);
    expect(await real.journal(NFLOG_STATE_KEY)).toEqual([{ set: { a: entry(1), b: entry(2) } }]);
  });
});
