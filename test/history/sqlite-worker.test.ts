import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, Migrator, sql, type Migration } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateHistory, openHistoryDatabase } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { WorkerSqliteDialect } from '../../src/history/worker-sqlite-dialect.js';
import { storeCause, writeRefusal } from '../../src/history/write-refusal.js';
import { silentLogger } from '../../src/util/logger.js';

/**
 * The history's SQLite on its own thread (issue 43): a statement that takes long holds that thread, not the event
 * loop the daemon answers its health checks and polls on; an error keeps the driver's code across the thread.
 */
describe('the SQLite history on a worker thread', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-sqlite-worker-'));
  const opened = openHistoryDatabase(historySchema.parse({}), dir, silentLogger());
  afterAll(async () => {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the event loop free while a long statement runs', async () => {
    await migrateHistory(opened.db);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    try {
      // A few million rows counted: long enough that a synchronous driver would let no timer fire meanwhile.
      const counted = await sql<{ n: number }>`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c`.execute(opened.db);
      expect(Number(counted.rows[0]?.n)).toBe(3_000_000);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(3);
  });

  it('keeps the driver’s code on an error: a record refused for its content is told from a refusal of the store', async () => {
    await migrateHistory(opened.db);
    const row = { rule: 'R', key_text: '', local_date: '2026-11-26', deadline: 0, by: 'ana', at: 1, reason: 'x' };
    await opened.db.insertInto('sla_occurrence_excuses').values(row).execute();
    const err = await opened.db
      .insertInto('sla_occurrence_excuses')
      .values(row)
      .execute()
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(writeRefusal(err)).toMatchObject({ kind: 'content' });
    expect(writeRefusal(err).code).toMatch(/CONSTRAINT|19/);
  });

  it('a transaction SQLite already rolled back itself (a full disk) fails with its own error, not the ROLLBACK\'s (issue 53)', async () => {
    await migrateHistory(opened.db);
    const err = await opened.db
      .transaction()
      .execute(async (tx) => {
        // As after SQLITE_FULL: the transaction is gone before the caller's error reaches Kysely's ROLLBACK.
        await sql`rollback`.execute(tx);
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ message: 'database or disk is full', code: 'SQLITE_FULL' });
    expect(storeCause(err)).toBe('the disk is full (SQLITE_FULL: ENOSPC)');
    // The connection is usable again.
    await expect(sql`select 1 as one`.execute(opened.db)).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });

  it('fails a statement over its time limit and runs the next on a new thread, not behind it', async () => {
    const file = path.join(dir, 'limited.sqlite');
    const db = new Kysely<Record<string, never>>({ dialect: new WorkerSqliteDialect({ file, statementTimeoutMs: 150 }) });
    try {
      // Seconds of counting: over the limit at once; its thread is left to finish it.
      const long = sql`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 15000000) SELECT count(*) AS n FROM c`.execute(db);
      await expect(long).rejects.toMatchObject({ code: 'history_statement_timeout' });
      const after = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
      expect(after.rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });
  it('a migration that stops half-way leaves nothing behind: the next start applies it whole', async () => {
    const file = path.join(dir, 'half-migrated.sqlite');
    const migrate = async (first: Migration): Promise<unknown> => {
      const db = new Kysely<Record<string, never>>({ dialect: new WorkerSqliteDialect({ file }) });
      try {
        const { error } = await new Migrator({ db, provider: { getMigrations: () => Promise.resolve({ '0001_made': first }) } }).migrateToLatest();
        return error;
      } finally {
        await db.destroy();
      }
    };
    // As a daemon killed inside its first start's migration: its first table made, the rest not.
    const stopped = await migrate({
      up: async (db) => {
        await sql`CREATE TABLE made (x INTEGER)`.execute(db);
        throw new Error('killed here');
      },
    });
    expect(stopped).toMatchObject({ message: 'killed here' });
    // Kysely ran SQLite's migrations unguarded, and this failed on "table made already exists".
    const error = await migrate({
      up: async (db) => {
        await sql`CREATE TABLE made (x INTEGER)`.execute(db);
        await sql`CREATE INDEX made_x ON made (x)`.execute(db);
      },
    });
    expect(error).toBeUndefined();
  });
});
