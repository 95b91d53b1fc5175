import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openHistoryDatabase } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { HistoryStore } from '../../src/history/history-store.js';
import { writeRefusal } from '../../src/history/write-refusal.js';
import type { SilenceEventRecord } from '../../src/history/history-records.js';
import { silentLogger } from '../../src/util/logger.js';

/**
 * A `history.sqlite` deleted, replaced or corrupt (issue 43): writes to a deleted file were taken with history_up 1
 * and lost at the restart, and a corrupt file kept the history down for good.
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
  it('deleted or replaced while open: the store refuses writes (the records wait in the journal) instead of writing to a lost file', async () => {
    for (const how of ['deleted', 'replaced'] as const) {
      const dir = stateDir();
      const store = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, silentLogger()));
      await store.ensureSchema();
      await store.write([silenceEvent('a')]);
      const file = path.join(dir, 'history.sqlite');
      rmSync(file);
      if (how === 'replaced') writeFileSync(file, '');
      const refused = await store.write([silenceEvent('b')]).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused, how).toMatchObject({ code: 'history_file_gone' });
      // A refusal of the store: kept and tried again, never given up.
      expect(writeRefusal(refused).kind).toBe('store');
      await expect(store.ping()).rejects.toMatchObject({ code: 'history_file_gone' });
      await store.close();
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
