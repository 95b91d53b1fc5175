import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStateStore } from '../../src/state/file-state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';

describe('FileStateStore', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a burst of saves of one key shares writes: the newest value lands, every caller resolves, few fsync rounds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-state-'));
    dirs.push(dir);
    const store = new FileStateStore(dir, silentLogger(), new ManualClock(0));
    await store.init();
    // Count the real writes (each one is a temp file, fsync, rename, fsync of the folder).
    const internals = store as unknown as { write: (key: string, value: unknown) => Promise<void> };
    const write = internals.write.bind(store);
    let writes = 0;
    internals.write = (key, value) => {
      writes++;
      return write(key, value);
    };
    const saves = Array.from({ length: 20 }, (_, i) => store.save('nflog', { seq: i }));
    await Promise.all(saves);
    expect(JSON.parse(readFileSync(join(dir, 'nflog.json'), 'utf8'))).toEqual({ seq: 19 });
    // Saves queued behind a write not yet started share it (20 writes without coalescing).
    expect(writes).toBeLessThanOrEqual(2);
    expect(await store.load('nflog')).toEqual({ seq: 19 });
  });

  it('removes the temp files of writes a killed process did not finish, and keeps the snapshots they would have replaced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-state-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'alerts.json'), JSON.stringify({ kept: true }));
    writeFileSync(join(dir, 'alerts.json.tmp-4242'), '{"half": ');
    writeFileSync(join(dir, 'notes.txt'), 'not ours');
    const store = new FileStateStore(dir, silentLogger(), new ManualClock(0));
    await store.init();
    expect(readdirSync(dir).sort()).toEqual(['alerts.json', 'notes.txt']);
    expect(await store.load('alerts')).toEqual({ kept: true });
  });
});

describe('FileStateStore journal', () => {
  const dirs: string[] = [];
  const stores: FileStateStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'tw-journal-'));
    dirs.push(dir);
    return dir;
  }
  async function open(dir: string, logs?: string[]): Promise<FileStateStore> {
    const logger = logs ? createLogger({ level: 'warn', destination: { write: (s: string) => void logs.push(s) } }) : silentLogger();
    const s = new FileStateStore(dir, logger, new ManualClock(0));
    await s.init();
    stores.push(s);
    return s;
  }

  it('a restart reads the snapshot and the records appended after it, in order', async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.append('nflog', { n: 1 });
    await first.save('nflog', { upTo: 1 });
    await first.append('nflog', { n: 2 });
    await first.append('nflog', { n: 3 });
    // No close: as after a kill -9.
    const second = await open(dir);
    expect(await second.load('nflog')).toEqual({ upTo: 1 });
    expect(await second.journal('nflog')).toEqual([{ n: 2 }, { n: 3 }]);
    // Keys do not share journals.
    expect(await second.journal('outbox')).toEqual([]);
  });

  it('reads a large journal (read as a stream) whole and in order, across its chunks', async () => {
    const dir = tempDir();
    const records = Array.from({ length: 60_000 }, (_, n) => ({ n, text: 'x'.repeat(200) }));
    writeFileSync(join(dir, 'history.journal.journal'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const store = await open(dir);
    const read = await store.journal('history.journal');
    expect(read).toHaveLength(records.length);
    expect(read.every((r, i) => (r as { n: number }).n === i)).toBe(true);
    expect(read[read.length - 1]).toEqual(records[records.length - 1]);
  });

  it('ignores a torn last line with a warning, and the next append starts a line of its own', async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.append('nflog', { n: 1 });
    await first.close();
    // A power loss in the middle of an append.
    appendFileSync(join(dir, 'nflog.journal'), '{"n":2,"pa');
    const logs: string[] = [];
    const second = await open(dir, logs);
    expect(await second.journal('nflog')).toEqual([{ n: 1 }]);
    expect(logs.join('')).toContain('torn last line');
    await second.append('nflog', { n: 3 });
    expect(await second.journal('nflog')).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('skips an unreadable line in the middle and keeps the rest', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'nflog.journal'), '{"n":1}\n\u0000\u0000\u0000\n{"n":2}\n');
    const logs: string[] = [];
    const s = await open(dir, logs);
    expect(await s.journal('nflog')).toEqual([{ n: 1 }, { n: 2 }]);
    expect(logs.join('')).toContain('unreadable lines');
  });

  it('a snapshot replaces the journal: rotated at the call, deleted once durable', async () => {
    const dir = tempDir();
    const s = await open(dir);
    for (let n = 1; n <= 3; n++) await s.append('nflog', { n });
    const saving = s.save('nflog', { upTo: 3 });
    // Set aside at once: the appends that follow go to a fresh journal.
    expect(readdirSync(dir).filter((f) => f.startsWith('nflog.journal')).sort()).toEqual(['nflog.journal.1']);
    await s.append('nflog', { n: 4 });
    await saving;
    expect(readdirSync(dir).filter((f) => f.startsWith('nflog.journal'))).toEqual(['nflog.journal']);
    expect(await s.journal('nflog')).toEqual([{ n: 4 }]);
  });

  it('a crash before the snapshot is durable loses nothing: the rotated journal is read before the current one and removed by the next snapshot', async () => {
    const dir = tempDir();
    // What a process killed between the rotation and the snapshot's rename leaves behind.
    writeFileSync(join(dir, 'nflog.json'), JSON.stringify({ upTo: 0 }));
    writeFileSync(join(dir, 'nflog.journal.7'), '{"n":1}\n{"n":2}\n');
    writeFileSync(join(dir, 'nflog.journal'), '{"n":3}\n');
    const s = await open(dir);
    expect(await s.load('nflog')).toEqual({ upTo: 0 });
    expect(await s.journal('nflog')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await s.save('nflog', { upTo: 3 });
    // Numbered after the leftover, and both are gone once the snapshot holding them is durable.
    expect(readdirSync(dir).filter((f) => f.startsWith('nflog.journal'))).toEqual([]);
    expect(await s.journal('nflog')).toEqual([]);
  });

  it('appends racing a burst of snapshots are never lost (file and memory stores)', async () => {
    const dir = tempDir();
    for (const s of [await open(dir), new MemoryStateStore()]) {
      // The caller's model: a map, each change appended as a record, a snapshot of it now and then.
      const model: Record<string, number> = {};
      const pending: Array<Promise<void>> = [];
      for (let i = 0; i < 300; i++) {
        const key = `k${i % 37}`;
        model[key] = i;
        pending.push(s.append('nflog', { key, value: i }));
        if (i % 25 === 0) pending.push(s.save('nflog', { ...model }));
      }
      await Promise.all(pending);
      const restored = { ...((await s.load('nflog')) as Record<string, number>) };
      for (const record of (await s.journal('nflog')) as Array<{ key: string; value: number }>) restored[record.key] = record.value;
      expect(restored).toEqual(model);
      // Only what came after the last snapshot call is left to replay.
      expect((await s.journal('nflog')).length).toBe(299 - 275);
    }
  });

  it('rejects an append it cannot write, with a stable code and the write marked failed', async () => {
    const dir = tempDir();
    const s = await open(dir);
    rmSync(dir, { recursive: true, force: true });
    await expect(s.append('nflog', { n: 1 })).rejects.toMatchObject({ code: 'state_append' });
    expect(s.lastWriteOk).toBe(false);
    await expect(s.append('../x', {})).rejects.toMatchObject({ code: 'state_key' });
  });
});
