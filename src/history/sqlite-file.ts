import { chmodSync, closeSync, existsSync, openSync, renameSync } from 'node:fs';
import type { SqliteDatabase } from 'kysely';
import { TransferWatchError, errorMessage } from '../util/errors.js';

/**
 * The SQLite driver: Node's own `node:sqlite` where the runtime has it (Node 22.13 and later), better-sqlite3 on
 * Node 20. better-sqlite3 12 is not used on Node 24: its statements' finalizers abort the process there
 * (`Assertion failed: (env) != nullptr`, fixed only in its 13.x, which needs Node 22).
 */
export async function openSqlite(file: string): Promise<{ database: SqliteDatabase; movedAside?: { to: string; reason: string } }> {
  let database: SqliteDatabase | undefined;
  try {
    database = await openSqliteFile(file);
    // A file that is not a database, or whose schema is damaged, fails here (or at its pragmas): it is moved aside, as
    // corrupt state files are, and a new one takes its place (the records waiting in the journal are written to it).
    database.prepare('SELECT count(*) FROM sqlite_master').all([]);
    return { database };
  } catch (err) {
    if (!isCorrupt(err)) throw err;
    return replaceCorrupt(file, database, err);
  }
}

/**
 * A file found corrupt (at its opening, or by a statement while running): closed, moved aside as
 * `history.sqlite.corrupt-<time>` with its -wal and -shm (for whoever wants to recover from it), and a new one opened
 * at its path.
 */
export async function replaceCorrupt(file: string, database: SqliteDatabase | undefined, err: unknown): Promise<{ database: SqliteDatabase; movedAside: { to: string; reason: string } }> {
  if (database) closeQuietly(database);
  const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, aside);
  for (const f of [`${file}-wal`, `${file}-shm`]) if (existsSync(f)) renameSync(f, `${aside}${f.slice(file.length)}`);
  return { database: await openSqliteFile(file), movedAside: { to: aside, reason: errorMessage(err) } };
}

/** SQLITE_CORRUPT (11) or SQLITE_NOTADB (26), from either driver, anywhere in the error's causes. */
export function isCorrupt(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = Reflect.get(e, 'cause'), depth++) {
    const code = String(Reflect.get(e, 'code') ?? '');
    const errcode = Reflect.get(e, 'errcode');
    if (/^SQLITE_(CORRUPT|NOTADB)/.test(code) || (typeof errcode === 'number' && [11, 26].includes(errcode & 0xff))) return true;
  }
  return false;
}

function closeQuietly(database: SqliteDatabase): void {
  try {
    database.close();
  } catch {
    /* already unusable */
  }
}

async function openSqliteFile(file: string): Promise<SqliteDatabase> {
  const pragmas = [
    // WAL: readers (the page, the API) never wait for the writer; NORMAL is durable across a process kill.
    'PRAGMA journal_mode = WAL',
    'PRAGMA synchronous = NORMAL',
    'PRAGMA busy_timeout = 5000',
  ];
  try {
    // Private like every other state file (0600): SQLite would create it with the umask's mode (0644), and makes its
    // -wal and -shm files with the database file's own mode. A file of an earlier version is narrowed too.
    closeSync(openSync(file, 'a', 0o600));
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
    const builtin = await loadNodeSqlite();
    if (builtin) {
      const database = new builtin.DatabaseSync(file);
      for (const p of pragmas) database.exec(p);
      return nodeSqliteAdapter(database);
    }
    const { default: Database } = await import('better-sqlite3');
    const database = new Database(file);
    for (const p of pragmas) database.exec(p);
    return database;
  } catch (err) {
    throw new TransferWatchError('history_open', `cannot open the history database ${file}: ${errorMessage(err)}`, { cause: err });
  }
}

/** The part of `node:sqlite` used here (its types are not in @types/node 20, which this package builds with). */
interface NodeSqliteStatement {
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
  columns?(): unknown[];
}
interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): NodeSqliteStatement;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: new (file: string) => NodeSqliteDatabase;
}

async function loadNodeSqlite(): Promise<NodeSqlite | undefined> {
  // A name TypeScript does not resolve: Node 20's types have no node:sqlite.
  const name = 'node:sqlite';
  try {
    const mod = (await import(name)) as Partial<NodeSqlite>;
    return typeof mod.DatabaseSync === 'function' ? (mod as NodeSqlite) : undefined;
  } catch {
    return undefined; // Node 20, or 22 before it was unflagged
  }
}

/** `node:sqlite`'s DatabaseSync in the shape Kysely's SQLite dialect drives (better-sqlite3's). */
function nodeSqliteAdapter(database: NodeSqliteDatabase): SqliteDatabase {
  type Param = unknown;
  return {
    close: () => database.close(),
    prepare: (sql: string) => {
      const statement = database.prepare(sql);
      const reader = typeof statement.columns === 'function' ? statement.columns().length > 0 : /^\s*(select|with|pragma|values)\b|\breturning\b/i.test(sql);
      return {
        reader,
        all: (parameters: ReadonlyArray<unknown>) => statement.all(...(parameters as Param[])),
        run: (parameters: ReadonlyArray<unknown>) => {
          const r = statement.run(...(parameters as Param[]));
          return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
        },
        iterate: (parameters: ReadonlyArray<unknown>) => statement.iterate(...(parameters as Param[])),
      };
    },
  };
}
