import { describe, expect, it } from 'vitest';
import { writeRefusal } from '../../src/history/write-refusal.js';

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
});
