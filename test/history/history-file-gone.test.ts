import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openHistoryDatabase } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { HistoryStore } from '../../src/history/history-store.js';
import type { SilenceEventRecord } from '../../src/history/history-records.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';

/**
 * A `history.sqlite` deleted, replaced or corrupt (issue 43): writes to a deleted file were taken with history_up 1
 * and lost at the restart, and a corrupt file kept the history down for good. Now the file at the path is opened
 * (a new one when it was deleted) without a restart, and a corrupt one is moved aside.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'tw-history-gone-'));
  dirs.push(d);
  return d;
}

function silenceEvent(id: string): SilenceEventRecord {
  return { kind: 'silence', id, at: Date.now(), event: 'created', silence_id: id, matchers: [], created_by: 'ana', comment: 'x', starts_at: 0, ends_at: 1 };
}

describe('the SQLite history file', () => {
  it('deleted or replaced while open: the file at its path is opened (a new one for a deleted file), saying so, and takes the records', async () => {
    for (const how of ['deleted', 'replaced'] as const) {
      const dir = stateDir();
      const lines: string[] = [];
      const logger = createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(l) } });
      const store = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, logger));
      await store.ensureSchema();
      await store.write([silenceEvent('a')]);
      const file = path.join(dir, 'history.sqlite');
      rmSync(file);
      if (how === 'replaced') writeFileSync(file, '');
      // Not into the unlinked file (lost at the next start): into the one at the path, its tables made first.
      await store.write([silenceEvent('b')]);
      await store.ping();
      const page = await store.silenceEvents({ matchers: [], from: 0, to: Date.now() + 1, limit: 10 });
      expect(page.items.map((e) => e.id), how).toEqual(['b']);
      await store.close();
      expect(lines.join('\n'), how).toContain(how === 'deleted' ? 'the history database was deleted while open' : 'the history database was replaced while open');
      // Another process opening the path reads what was written after.
      const again = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, silentLogger()));
      expect((await again.silenceEvents({ matchers: [], from: 0, to: Date.now() + 1, limit: 10 })).items.map((e) => e.id), how).toEqual(['b']);
      await again.close();
    }
  });

  it('corrupt at start: moved aside, and a new one takes the records', async () => {
    const dir = stateDir();
    writeFileSync(path.join(dir, 'history.sqlite'), 'this is not a database, it was overwritten '.repeat(200));
    const store = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, silentLogger()));
    await store.ensureSchema();
    await store.write([silenceEvent('c')]);
    const page = await store.silenceEvents({ matchers: [], from: 0, to: Date.now() + 1, limit: 10 });
    expect(page.items.map((e) => e.id)).toEqual(['c']);
    expect(readdirSync(dir).some((f) => f.startsWith('history.sqlite.corrupt-'))).toBe(true);
    expect(existsSync(path.join(dir, 'history.sqlite'))).toBe(true);
    await store.close();
  });

  it('corrupt while running: the statement that finds it fails, the file is moved aside, and a new one takes the next records', async () => {
    const dir = stateDir();
    const file = path.join(dir, 'history.sqlite');
    // A file of a few hundred pages, closed (its write-ahead log checkpointed into it).
    const first = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, silentLogger()));
    await first.ensureSchema();
    await first.write(Array.from({ length: 3_000 }, (_, i) => ({ ...silenceEvent(`s${i}`), comment: 'x'.repeat(200) })));
    await first.close();
    const lines: string[] = [];
    const store = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, createLogger({ level: 'warn', destination: { write: (l: string) => void lines.push(l) } })));
    await store.ensureSchema();
    // The table's pages damaged behind the daemon's back (not the first, the schema's).
    const size = statSync(file).size;
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(Math.floor(size / 2), 0xab), 0, Math.floor(size / 2), Math.floor(size / 4));
    closeSync(fd);
    const all = { matchers: [], from: 0, to: Date.now() + 1, limit: 5_000 };
    const err = await store.silenceEvents(all).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String((err as Error | undefined)?.message)).toMatch(/malformed|corrupt/i);
    expect(readdirSync(dir).some((f) => f.startsWith('history.sqlite.corrupt-'))).toBe(true);
    expect(lines.join('\n')).toContain('the history database is damaged: moved aside, and no good backup to restore: a new, empty one is started');
    // The next write makes the new file's tables and is kept there.
    await store.write([silenceEvent('after')]);
    expect((await store.silenceEvents({ ...all, to: Date.now() + 1 })).items.map((e) => e.id)).toEqual(['after']);
    await store.close();
  });
});
