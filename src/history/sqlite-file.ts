import { chmodSync, closeSync, copyFileSync, existsSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SqliteDatabase } from 'kysely';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { walDamage } from './wal-check.js';

/**
 * The SQLite driver: Node's own `node:sqlite` where the runtime has it (Node 22.13 and later), better-sqlite3 on
 * Node 20. better-sqlite3 12 is not used on Node 24: its statements' finalizers abort the process there
 * (`Assertion failed: (env) != nullptr`, fixed only in its 13.x, which needs Node 22).
 */
export async function openSqlite(file: string): Promise<{ database: SqliteDatabase; movedAside?: MovedAside }> {
  let database: SqliteDatabase | undefined;
  // Opened, a damaged write-ahead log would be replayed up to its damage and the rest dropped without a word: it is
  // moved aside whole instead, as a damaged file is, and the newest good backup takes its place.
  const wal = walDamage(file);
  if (wal) return replaceCorrupt(file, undefined, new Error(wal));
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

/** A damaged file moved aside, and the backup put in its place (none: a new, empty file was started). */
export interface MovedAside {
  to: string;
  reason: string;
  restoredFrom?: { file: string; at: number } | undefined;
}

/**
 * A file found corrupt (at its opening, by a statement while running, or by an integrity check): closed, moved aside
 * as `history.sqlite.corrupt-<time>` with its -wal and -shm (for whoever wants to recover from it), and in its place
 * the newest backup of `backups/` that passes `quick_check` (contract 12a) — a new, empty file only when there is none.
 */
export async function replaceCorrupt(file: string, database: SqliteDatabase | undefined, err: unknown): Promise<{ database: SqliteDatabase; movedAside: MovedAside }> {
  if (database) closeQuietly(database);
  const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, aside);
  for (const f of [`${file}-wal`, `${file}-shm`]) if (existsSync(f)) renameSync(f, `${aside}${f.slice(file.length)}`);
  for (const backup of listBackups(backupsDirOf(file))) {
    copyFileSync(backup.file, file);
    let restored: SqliteDatabase | undefined;
    try {
      restored = await openSqliteFile(file);
      if (integrityProblems(restored).length === 0) return { database: restored, movedAside: { to: aside, reason: errorMessage(err), restoredFrom: backup } };
    } catch {
      /* a damaged backup: the next older one */
    }
    if (restored) closeQuietly(restored);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
  return { database: await openSqliteFile(file), movedAside: { to: aside, reason: errorMessage(err) } };
}

/** What `PRAGMA quick_check` found wrong with an open database (none: it is sound). */
export function integrityProblems(database: SqliteDatabase): string[] {
  const rows = database.prepare('PRAGMA quick_check').all([]) as Array<Record<string, unknown>>;
  const found = rows.map((r) => String(Object.values(r)[0] ?? ''));
  return found.length === 1 && found[0] === 'ok' ? [] : found;
}

/** Where the backups of a history file are kept: `backups/` beside it (in `state.dir`). */
export function backupsDirOf(file: string): string {
  return join(dirname(file), 'backups');
}

const BACKUP_NAME = /^history-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z\.sqlite$/;

/** The name of a backup taken at `at`: `history-20261202T031500123Z.sqlite` (sorts by time). */
export function backupName(at: number): string {
  return `history-${new Date(at).toISOString().replace(/[-:.]/g, '')}.sqlite`;
}

/** The backups in `dir`, newest first, with when each was taken (from its name). */
export function listBackups(dir: string): Array<{ file: string; at: number }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .flatMap((name) => {
      const m = BACKUP_NAME.exec(name);
      if (!m) return [];
      const [, y, mo, d, h, mi, se, ms] = m.map(Number) as number[];
      return [{ file: join(dir, name), at: Date.UTC(y as number, (mo as number) - 1, d, h, mi, se, ms) }];
    })
    .sort((a, b) => b.at - a.at);
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

/** A SQLite file opened as the store opens it (WAL, private mode), without checking it: `history check` looks at it as it is. */
export async function openSqliteFile(file: string): Promise<SqliteDatabase> {
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
