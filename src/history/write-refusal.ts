/**
 * Why the history database refused a write: because of the store (`store`: full, read-only, locked, deleted,
 * corrupt, unreachable — the records wait in the journal and are written when it takes them again) or because of
 * the record (`content`: a value the database cannot hold — that record alone is given up). A refusal of unknown
 * kind is the store's: a record kept too long is seen (TransferWatchHistoryDown), one given up is lost.
 */
export type WriteRefusal = { kind: 'store' | 'content'; code: string };

/** SQLite's primary result codes of a bad record: too big, constraint, datatype mismatch, out of range. */
const SQLITE_CONTENT = new Map([
  [18, 'SQLITE_TOOBIG'],
  [19, 'SQLITE_CONSTRAINT'],
  [20, 'SQLITE_MISMATCH'],
  [25, 'SQLITE_RANGE'],
]);
/** PostgreSQL's SQLSTATE classes of a bad record: data exception, integrity constraint violation. */
const POSTGRES_CONTENT_CLASSES = new Set(['22', '23']);

export function writeRefusal(err: unknown): WriteRefusal {
  const code = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
  const errcode = typeof err === 'object' && err !== null ? Reflect.get(err, 'errcode') : undefined;
  // node:sqlite: code ERR_SQLITE_ERROR, the SQLite result code in `errcode` (extended: its low byte is the primary).
  if (typeof errcode === 'number') {
    const content = SQLITE_CONTENT.get(errcode & 0xff);
    return content ? { kind: 'content', code: content } : { kind: 'store', code: `SQLITE_${errcode & 0xff}` };
  }
  if (typeof code === 'string') {
    // better-sqlite3: the SQLite code's name (SQLITE_READONLY, SQLITE_FULL, SQLITE_CONSTRAINT_PRIMARYKEY ...).
    if (code.startsWith('SQLITE_')) {
      const primary = code.split('_').slice(0, 2).join('_');
      return { kind: [...SQLITE_CONTENT.values()].includes(primary) ? 'content' : 'store', code: primary };
    }
    // PostgreSQL: a five-character SQLSTATE.
    if (/^[0-9A-Z]{5}$/.test(code)) return { kind: POSTGRES_CONTENT_CLASSES.has(code.slice(0, 2)) ? 'content' : 'store', code };
    return { kind: 'store', code };
  }
  return { kind: 'store', code: 'unknown' };
}

/** What the operating system or the database server says under a store's refusal, by the code it answered with. */
const SQLITE_CAUSES = new Map([
  [13, 'the disk is full (SQLITE_FULL: ENOSPC)'],
  [8, 'the database file or its folder is read-only (SQLITE_READONLY: EROFS, or the file mode)'],
  [10, 'the disk answered an I/O error (SQLITE_IOERR: EIO, or a file system gone read-only)'],
  [14, 'the database file cannot be opened (SQLITE_CANTOPEN: deleted, its folder gone, or no permission)'],
  [11, 'the database file is damaged (SQLITE_CORRUPT)'],
  [26, 'the file is not a database (SQLITE_NOTADB)'],
  [5, 'the database file is locked by another process (SQLITE_BUSY)'],
]);
const POSTGRES_CAUSES = new Map([
  ['53100', "PostgreSQL's disk is full (53100 disk_full)"],
  ['53200', 'PostgreSQL is out of memory (53200)'],
  ['25006', 'PostgreSQL answers read-only (25006: a standby, or default_transaction_read_only)'],
  ['57P01', 'PostgreSQL is shutting down (57P01)'],
  ['57P03', 'PostgreSQL does not accept connections yet (57P03: starting or recovering)'],
  ['58030', "PostgreSQL's disk answered an I/O error (58030)"],
]);
const OS_CAUSES = new Map([
  ['ENOSPC', 'the disk is full (ENOSPC)'],
  ['EROFS', 'the file system is read-only (EROFS)'],
  ['EACCES', 'permission denied (EACCES)'],
  ['EIO', 'the disk answered an I/O error (EIO)'],
  ['ENOENT', 'the file or its folder is gone (ENOENT)'],
  ['ECONNREFUSED', 'the database server refuses connections (ECONNREFUSED)'],
  ['ETIMEDOUT', 'the database server does not answer (ETIMEDOUT)'],
]);

/**
 * Why the store refused, in the words of its cause (contract 12a): "the disk is full (SQLITE_FULL: ENOSPC)" rather than
 * the driver's last words; undefined when the error says nothing known. Looked for in the error and its causes.
 */
export function storeCause(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = Reflect.get(e, 'cause'), depth++) {
    const code = Reflect.get(e, 'code');
    const errcode = Reflect.get(e, 'errcode');
    if (typeof errcode === 'number') {
      const cause = SQLITE_CAUSES.get(errcode & 0xff);
      if (cause) return cause;
    }
    if (typeof code === 'string') {
      const named = /^SQLITE_([A-Z]+)/.exec(code)?.[1];
      const sqlite = named === undefined ? undefined : [...SQLITE_CAUSES.values()].find((c) => c.includes(`(SQLITE_${named}`));
      const cause = sqlite ?? POSTGRES_CAUSES.get(code) ?? OS_CAUSES.get(code);
      if (cause) return cause;
    }
  }
  return undefined;
}
