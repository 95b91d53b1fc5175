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
