import { describe, expect, it } from 'vitest';
import { storeCause, writeRefusal } from '../../src/history/write-refusal.js';

const err = (props: Record<string, unknown>, message = 'x'): Error => Object.assign(new Error(message), props);

describe('writeRefusal', () => {
  it('tells a refusal of the store (kept, retried) from one of a record’s content (given up)', () => {
    expect(writeRefusal(err({ code: 'SQLITE_READONLY' }))).toEqual({ kind: 'store', code: 'SQLITE_READONLY' });
    expect(writeRefusal(err({ code: 'SQLITE_FULL' }))).toEqual({ kind: 'store', code: 'SQLITE_FULL' });
    expect(writeRefusal(err({ code: 'SQLITE_IOERR_WRITE' }))).toEqual({ kind: 'store', code: 'SQLITE_IOERR' });
    expect(writeRefusal(err({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }))).toEqual({ kind: 'content', code: 'SQLITE_CONSTRAINT' });
    expect(writeRefusal(err({ code: 'SQLITE_TOOBIG' }))).toEqual({ kind: 'content', code: 'SQLITE_TOOBIG' });
    // node:sqlite: the result code in errcode (extended codes keep the primary in their low byte).
    expect(writeRefusal(err({ code: 'ERR_SQLITE_ERROR', errcode: 13 }))).toEqual({ kind: 'store', code: 'SQLITE_13' });
    expect(writeRefusal(err({ code: 'ERR_SQLITE_ERROR', errcode: 8 | (1 << 8) }))).toEqual({ kind: 'store', code: 'SQLITE_8' });
    expect(writeRefusal(err({ code: 'ERR_SQLITE_ERROR', errcode: 19 | (6 << 8) }))).toEqual({ kind: 'content', code: 'SQLITE_CONSTRAINT' });
    // PostgreSQL SQLSTATEs: data exceptions and constraint violations are the record's; the rest the store's.
    expect(writeRefusal(err({ code: '22021' }))).toEqual({ kind: 'content', code: '22021' });
    expect(writeRefusal(err({ code: '23505' }))).toEqual({ kind: 'content', code: '23505' });
    expect(writeRefusal(err({ code: '53100' }))).toEqual({ kind: 'store', code: '53100' });
    expect(writeRefusal(err({ code: '25006' }))).toEqual({ kind: 'store', code: '25006' });
    expect(writeRefusal(err({ code: '57P01' }))).toEqual({ kind: 'store', code: '57P01' });
    expect(writeRefusal(err({ code: 'ECONNREFUSED' }))).toEqual({ kind: 'store', code: 'ECONNREFUSED' });
    // Unknown: the store's, so nothing is lost without a word.
    expect(writeRefusal(new Error('cannot rollback - no transaction is active'))).toEqual({ kind: 'store', code: 'unknown' });
    expect(writeRefusal('thrown text')).toEqual({ kind: 'store', code: 'unknown' });
  });

  it('names the cause of a store\'s refusal as the disk or the server says it (issue 53: a full disk read "cannot rollback")', () => {
    expect(storeCause(err({ code: 'SQLITE_FULL' }))).toBe('the disk is full (SQLITE_FULL: ENOSPC)');
    expect(storeCause(err({ code: 'ERR_SQLITE_ERROR', errcode: 13 }))).toBe('the disk is full (SQLITE_FULL: ENOSPC)');
    expect(storeCause(err({ code: 'SQLITE_READONLY_DBMOVED' }))).toBe('the database file or its folder is read-only (SQLITE_READONLY: EROFS, or the file mode)');
    expect(storeCause(err({ code: 'ERR_SQLITE_ERROR', errcode: 10 | (3 << 8) }))).toBe('the disk answered an I/O error (SQLITE_IOERR: EIO, or a file system gone read-only)');
    expect(storeCause(err({ code: '53100' }))).toBe("PostgreSQL's disk is full (53100 disk_full)");
    expect(storeCause(err({ code: '25006' }))).toMatch(/^PostgreSQL answers read-only/);
    // Wrapped (a TransferWatchError around the driver's): found in its causes.
    expect(storeCause(Object.assign(new Error('write failed'), { cause: err({ code: 'EROFS' }) }))).toBe('the file system is read-only (EROFS)');
    expect(storeCause(new Error('something else'))).toBeUndefined();
  });
});
