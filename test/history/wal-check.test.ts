import { closeSync, copyFileSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SqliteDatabase } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteFile } from '../../src/history/sqlite-file.js';
import { walDamage } from '../../src/history/wal-check.js';

/**
 * A damaged write-ahead log (issue 53): quick_check never sees it, and the next opening drops every frame from the
 * damage on without a word. walDamage finds it as SQLite's recovery would, with the running connection's index or
 * without one.
 */
describe('walDamage', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-wal-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** One statement's rows (a pragma's too). */
  const rows = (db: SqliteDatabase, sql: string): unknown[] => [...db.prepare(sql).all([])];
  /** The first column of a statement's first row. */
  const value = (db: SqliteDatabase, sql: string): unknown => Object.values((rows(db, sql)[0] ?? {}) as Record<string, unknown>)[0];

  /**
   * A database opened as the store opens it (node:sqlite where the runtime has it, better-sqlite3 on Node 20), with
   * `n` committed transactions in its log (no checkpoint), its connection left open.
   */
  async function withLog(name: string, n: number): Promise<{ file: string; db: SqliteDatabase }> {
    const file = path.join(dir, name);
    const db = await openSqliteFile(file);
    rows(db, 'PRAGMA wal_autocheckpoint = 0');
    db.prepare('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)').run([]);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < n; i++) insert.run([`row ${i} ${'x'.repeat(200)}`]);
    return { file, db };
  }

  function overwrite(file: string, at: number, bytes: number): void {
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(bytes, 0xa5), 0, bytes, at);
    closeSync(fd);
  }

  it('finds nothing in a whole log, nor without one', async () => {
    const { file, db } = await withLog('whole.sqlite', 20);
    try {
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(32);
      expect(walDamage(file)).toBeUndefined();
      rows(db, 'PRAGMA wal_checkpoint(TRUNCATE)');
      expect(walDamage(file)).toBeUndefined();
    } finally {
      db.close();
    }
    expect(walDamage(path.join(dir, 'none.sqlite'))).toBeUndefined();
  });

  it('finds a damaged frame while the connection runs, which quick_check passes and the next opening drops', async () => {
    const { file, db } = await withLog('damaged.sqlite', 20);
    try {
      const pageSize = Number(value(db, 'PRAGMA page_size'));
      // The 5th frame's page overwritten (the frames before it stay good).
      overwrite(`${file}-wal`, 32 + 4 * (24 + pageSize) + 24 + 100, 64);
      expect(walDamage(file)).toMatch(/^the write-ahead log is damaged at frame \d of \d+: the \d+ frame\(s\) from there not yet in the file would be lost at the next start$/);
      expect(value(db, 'PRAGMA quick_check')).toBe('ok');

      // Without the index (the files as a killed process left them, copied): found by the frames of the log's salts.
      const copy = path.join(dir, 'copy.sqlite');
      copyFileSync(file, copy);
      copyFileSync(`${file}-wal`, `${copy}-wal`);
      expect(walDamage(copy)).toMatch(/^the write-ahead log is damaged at frame /);
      // What an opening does with it: the rows of the frames after the damage are gone, and nothing says so.
      const reopened = await openSqliteFile(copy);
      try {
        expect(Number(value(reopened, 'SELECT count(*) AS n FROM t'))).toBeLessThan(20);
      } catch (err) {
        // or the schema itself was in the dropped frames
        expect(String(err)).toContain('no such table');
      } finally {
        reopened.close();
      }
    } finally {
      db.close();
    }
  });

  it('finds a damaged header while frames are indexed', async () => {
    const { file, db } = await withLog('header.sqlite', 5);
    try {
      overwrite(`${file}-wal`, 24, 8);
      expect(walDamage(file)).toMatch(/^the write-ahead log's header is damaged: the \d+ frame\(s\) the database holds only in it would be lost at the next start$/);
    } finally {
      db.close();
    }
  });

  it('finds nothing wrong in frames a checkpoint already copied into the file (the next opening loses nothing)', async () => {
    const { file, db } = await withLog('backfilled.sqlite', 20);
    try {
      // A passive checkpoint copies every frame and leaves the log as it is until the next write restarts it.
      rows(db, 'PRAGMA wal_checkpoint(PASSIVE)');
      const walBytes = statSync(`${file}-wal`).size;
      overwrite(`${file}-wal`, 32, walBytes - 32);
      expect(walDamage(file)).toBeUndefined();
      // One more transaction after the checkpoint: its frame is in the log only, and its damage is found.
      db.prepare('INSERT INTO t (v) VALUES (?)').run(['after the checkpoint']);
      const pageSize = Number(value(db, 'PRAGMA page_size'));
      overwrite(`${file}-wal`, 32 + 24 + 100, Math.min(64, pageSize));
      expect(walDamage(file)).toMatch(/^the write-ahead log is damaged at frame 1 of \d+: the \d+ frame\(s\) from there not yet in the file would be lost at the next start$/);
    } finally {
      db.close();
    }
  });
});
