import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
});
