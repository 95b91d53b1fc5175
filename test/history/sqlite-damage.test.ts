import { closeSync, copyFileSync, openSync, readdirSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { listBackups, backupsDirOf } from '../../src/history/sqlite-file.js';
import type { OccurrenceRecord } from '../../src/sla/occurrence.js';
import { HistoryBackend } from '../helpers/history-backends.js';

/**
 * The SQLite history's backups and integrity check (contract 12a), on the store's thread: a verified backup is
 * written and kept N; a file found damaged by the check while running is moved aside and its newest good backup put
 * in its place, and the store says so (damage, with the backup restored) until it is repaired.
 */

function occurrence(user: string, deadline: number): OccurrenceRecord {
  return {
    kind: 'occurrence',
    id: `R\u001fuser=${user}\u001f${deadline}`,
    at: deadline,
    rule: 'R',
    key: { user },
    key_text: `user=${user}`,
    local_date: new Date(deadline).toISOString().slice(0, 10),
    deadline,
    timezone: 'UTC',
    outcome: 'on_time',
    final: true,
    arrived_at: deadline - 60_000,
    lateness_seconds: null,
    count: 1,
    min_count: 1,
    files: [{ file: `EXT_${user}_${deadline}.RET`, at: deadline - 60_000, source: 'prod' }],
    closes_at: deadline + 3_600_000,
    after_close: [],
  };
}

describe('the SQLite history, checked and backed up', () => {
  const backend = new HistoryBackend('sqlite');
  afterAll(() => backend.close());

  it('keeps verified backups, and a file found damaged while running is replaced by the newest good one', async () => {
    const store = await backend.open();
    const file = store.opened.where;
    const day = Date.UTC(2026, 10, 2, 8);
    // Enough rows that the tables span many pages.
    await store.write(Array.from({ length: 400 }, (_, i) => occurrence(`B${i}`, day)));
    expect(await store.integrityCheck()).toEqual([]);
    const first = await store.backup(Date.UTC(2026, 10, 2, 9), 2);
    expect(first?.file).toMatch(/backups\/history-20261102T090000000Z\.sqlite$/);
    await store.backup(Date.UTC(2026, 10, 2, 10), 2);
    await store.backup(Date.UTC(2026, 10, 2, 11), 2);
    // Two kept, the newest first; no partial file left.
    expect(listBackups(backupsDirOf(file)).map((b) => new Date(b.at).toISOString())).toEqual(['2026-11-02T11:00:00.000Z', '2026-11-02T10:00:00.000Z']);
    expect(readdirSync(backupsDirOf(file)).filter((f) => f.endsWith('.partial'))).toEqual([]);

    // Written after the last backup: what a restore loses (and the repair judges again from the service).
    await store.write([occurrence('LATE', day + 86_400_000)]);
    // The file damaged (its last third: rows, not the schema, so that it opens and the check finds it), put in place as
    // the one at the path while the daemon runs (checkpointed first: the file holds every page, the -wal none).
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(store.db);
    const damaged = `${file}.damaged`;
    copyFileSync(file, damaged);
    const fd = openSync(damaged, 'r+');
    const size = statSync(damaged).size;
    const from = Math.floor((size * 2) / 3 / 4096) * 4096;
    writeSync(fd, Buffer.alloc(size - from, 0x5a), 0, size - from, from);
    closeSync(fd);
    renameSync(damaged, file);
    expect(await store.opened.check?.()).toBe('reopened');

    const problems = await store.integrityCheck();
    expect(problems.length).toBeGreaterThan(0);
    expect(store.damage).toMatchObject({ restoredFrom: { at: Date.UTC(2026, 10, 2, 11) } });
    expect(store.damage?.to).toMatch(/history\.sqlite\.corrupt-/);
    expect(readdirSync(dirname(file)).some((f) => f.startsWith('history.sqlite.corrupt-'))).toBe(true);
    // The backup's ledger is in place and sound: 400 occurrences, not the one written after it.
    expect(await store.integrityCheck()).toEqual([]);
    const listed = await store.ledger.occurrences({ from: '2026-11-01', to: '2026-11-05', limit: 1_000, offset: 0 });
    expect(listed).toHaveLength(400);
    store.repaired();
    expect(store.damage).toBeUndefined();
  });
});
