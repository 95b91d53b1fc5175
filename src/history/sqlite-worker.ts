/**
 * The history's SQLite, on a thread of its own. Both drivers (node:sqlite, better-sqlite3) are synchronous: a
 * month's report, a page of 5,000 occurrences or a backfill's tail written in one transaction held the daemon's
 * event loop for seconds (its health check, its polling, every request). Here they hold this thread only; the
 * daemon sends each statement and awaits its answer (worker-sqlite-dialect.ts).
 *
 * An error crosses back as its message and codes (structured clone keeps only an Error's message and stack): the
 * store tells a refusal of the store (SQLITE_FULL, SQLITE_READONLY ...) from a refusal of the record by them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SqliteDatabase } from 'kysely';
import { integrityProblems, isCorrupt, openSqlite, replaceCorrupt, type MovedAside } from './sqlite-file.js';
import { walDamage } from './wal-check.js';

export interface SqliteWorkerData {
  file: string;
}

export type SqliteWorkerRequest =
  | { id: number; op: 'open' }
  | { id: number; op: 'query'; sql: string; parameters: readonly unknown[] }
  | { id: number; op: 'close' }
  /** `PRAGMA quick_check` of the open file; a damaged one is replaced (by its newest good backup) and said. */
  | { id: number; op: 'check' };

export interface SqliteWorkerError {
  message: string;
  name: string;
  code?: string | undefined;
  errcode?: number | undefined;
}

export type SqliteWorkerReply =
  | { id: number; ok: true; rows?: unknown[]; numAffectedRows?: bigint; insertId?: bigint; movedAside?: MovedAside; problems?: string[] }
  /** `movedAside`: the statement found the file corrupt; it was moved aside and its newest good backup (or a new one) opened. */
  | { id: number; ok: false; error: SqliteWorkerError; movedAside?: MovedAside };

const port = parentPort;
const { file } = workerData as SqliteWorkerData;
let database: SqliteDatabase | undefined;

function asWorkerError(err: unknown): SqliteWorkerError {
  const e = (typeof err === 'object' && err !== null ? err : {}) as Record<string, unknown>;
  // The codes may sit on a cause (TransferWatchError('history_open') wraps the driver's).
  const cause = (typeof e['cause'] === 'object' && e['cause'] !== null ? e['cause'] : {}) as Record<string, unknown>;
  const code = typeof e['code'] === 'string' ? e['code'] : typeof cause['code'] === 'string' ? cause['code'] : undefined;
  const errcode = typeof e['errcode'] === 'number' ? e['errcode'] : typeof cause['errcode'] === 'number' ? cause['errcode'] : undefined;
  return { message: err instanceof Error ? err.message : String(err), name: err instanceof Error ? err.name : 'Error', code, errcode };
}

async function handle(request: SqliteWorkerRequest): Promise<SqliteWorkerReply> {
  switch (request.op) {
    case 'open': {
      const opened = await openSqlite(file);
      database = opened.database;
      return { id: request.id, ok: true, ...(opened.movedAside ? { movedAside: opened.movedAside } : {}) };
    }
    case 'query': {
      if (!database) throw new Error('the history database is not open');
      const statement = database.prepare(request.sql);
      if (statement.reader) return { id: request.id, ok: true, rows: statement.all(request.parameters) as unknown[] };
      const { changes, lastInsertRowid } = statement.run(request.parameters);
      return {
        id: request.id,
        ok: true,
        rows: [],
        ...(changes !== undefined && changes !== null ? { numAffectedRows: BigInt(changes) } : {}),
        ...(lastInsertRowid !== undefined && lastInsertRowid !== null ? { insertId: BigInt(lastInsertRowid) } : {}),
      };
    }
    case 'close':
      database?.close();
      database = undefined;
      return { id: request.id, ok: true };
    case 'check': {
      if (!database) throw new Error('the history database is not open');
      let problems: string[];
      try {
        problems = integrityProblems(database);
      } catch (err) {
        if (!isCorrupt(err)) throw err;
        problems = [(err as Error).message];
      }
      // quick_check reads the log through its index and never sees a damaged frame; the next start would drop it.
      const wal = walDamage(file);
      if (wal) problems.push(wal);
      if (problems.length === 0) return { id: request.id, ok: true, problems };
      const replaced = await replaceCorrupt(file, database, new Error(`quick_check: ${problems.slice(0, 5).join('; ')}`));
      database = replaced.database;
      return { id: request.id, ok: true, problems, movedAside: replaced.movedAside };
    }
  }
}

/** A statement that found the file corrupt: the file is replaced (a new one is started), and the statement fails. */
async function failed(request: SqliteWorkerRequest, err: unknown): Promise<SqliteWorkerReply> {
  const reply: SqliteWorkerReply = { id: request.id, ok: false, error: asWorkerError(err) };
  if (request.op !== 'query' || !database || !isCorrupt(err)) return reply;
  try {
    const replaced = await replaceCorrupt(file, database, err);
    database = replaced.database;
    return { ...reply, movedAside: replaced.movedAside };
  } catch {
    database = undefined; // the next open (a new thread) tries again
    return reply;
  }
}

port?.on('message', (request: SqliteWorkerRequest) => {
  // One statement at a time, in the order sent: the driver's mutex and this thread's synchronous drivers keep it so.
  handle(request)
    .catch((err: unknown) => failed(request, err))
    .then((reply) => port.postMessage(reply));
});
