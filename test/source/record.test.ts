import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseRecord, transferOf } from '../../src/source/record.js';
import { IDENTITY_FIELDS, recordIdentity, recordIdentityV1 } from '../../src/source/record-identity.js';
import type { Transfer } from '../../src/source/transfer.js';
import { wireRecord } from './fake-transfer-service.js';

function ok(raw: unknown): Transfer {
  const r = parseRecord(raw, 'prod');
  if (!r.ok) throw new Error(`expected a transfer, got: ${r.reason}`);
  return r.transfer;
}

function reason(raw: unknown): string {
  const r = parseRecord(raw, 'prod');
  if (r.ok) throw new Error('expected an invalid record');
  return r.reason;
}

describe('parseRecord', () => {
  it('maps the service fields onto a Transfer', () => {
    const t = ok(wireRecord({ EVENTO: 5, RESULTADO: 0, NOMEARQUIVO: '/out/A.TXT', MENSAGEM: 'ok' }));
    expect(t).toMatchObject({
      source: 'prod',
      time: Date.parse('2024-05-01T12:00:00Z'),
      instance: 'PROD1',
      user: 'BANK1',
      eventCode: 5,
      event: 'transmission',
      file: '/out/A.TXT',
      code: 0,
      result: 'success',
      size: 2400,
      message: 'ok',
    });
    expect(t.record.DATAHORA).toBe('2024-05-01T12:00:00.000Z');
  });

  it('keeps an unknown event code as its string', () => {
    expect(ok(wireRecord({ EVENTO: 9 })).event).toBe('9');
  });

  it('gives the same identity to the same transfer however it was spelled, and ignores DIAS', () => {
    const canonical = ok(wireRecord());
    const spellings = [
      wireRecord({ DATAHORA: '2024-05-01T12:00:00.000Z', DIAS: 40 }),
      wireRecord({ DATAHORA: '2024-05-01 12:00:00' }),
      wireRecord({ DATAHORA: '2024-05-01T09:00:00-03:00' }),
      wireRecord({ DATAHORA: '2024-05-01T09:00:00-0300' }),
      wireRecord({ EVENTO: '7', RESULTADO: '12', TAMARQUIVO: '2400', MAXTAMREG: '240', NUMREG: '10', PROCID: '4242', THREADID: ' 7' }),
      wireRecord({ DIAS: '1', DATAARQUIVO: 20240501 }),
    ];
    for (const raw of spellings) expect(ok(raw).id).toBe(canonical.id);
  });

  it('gives different identities when any field but DIAS differs', () => {
    const base = ok(wireRecord()).id;
    const variants = [
      { DATAHORA: '2024-05-01T12:00:01Z' },
      { MENSAGEM: 'other' },
      { PROCID: null },
      { TAGS: 'x' },
      { CONEXAO: '' },
      { RESULTADO: 13 },
    ];
    for (const v of variants) expect(ok(wireRecord(v)).id, JSON.stringify(v)).not.toBe(base);
  });

  it('accepts absent descriptive fields as empty and absent counters as null', () => {
    const raw = wireRecord();
    for (const f of ['CONEXAO', 'MENSAGEM', 'TAGS', 'NUMREG', 'PROCID', 'THREADID', 'DIAS', 'TAMARQUIVO']) delete raw[f];
    const t = ok(raw);
    expect(t.record.MENSAGEM).toBe('');
    expect(t.record.NUMREG).toBeNull();
    expect(t.size).toBe(0);
  });

  it.each([
    [null, 'record is not an object'],
    [[1], 'record is not an object'],
    [wireRecord({ DATAHORA: undefined }), 'DATAHORA is missing or not a string'],
    [wireRecord({ DATAHORA: '2024-02-30T10:00:00Z' }), 'DATAHORA is not an ISO 8601 date-time'],
    [wireRecord({ DATAHORA: '2024-05-01T24:00:00Z' }), 'DATAHORA is not an ISO 8601 date-time'],
    [wireRecord({ DATAHORA: '1714564800000' }), 'DATAHORA is not an ISO 8601 date-time'],
    [wireRecord({ EVENTO: 'seven' }), 'EVENTO is missing or not an integer'],
    [wireRecord({ RESULTADO: 1.5 }), 'RESULTADO is missing or not an integer'],
    [wireRecord({ RESULTADO: null }), 'RESULTADO is missing or not an integer'],
    [wireRecord({ INSTANCE: 3 }), 'INSTANCE is missing or not a string'],
    [wireRecord({ TAMARQUIVO: '12kb' }), 'TAMARQUIVO is not an integer'],
    [wireRecord({ MENSAGEM: { text: 'x' } }), 'MENSAGEM is not a string'],
  ])('gives a reason instead of throwing for %j', (raw, expected) => {
    expect(reason(raw)).toBe(expected);
  });

  it("gives a read transfer its record's identity, and a transfer sent on with an id that id", () => {
    const read = ok(wireRecord());
    expect(read.id).toBe(recordIdentity(read.record));
    // A replica's transfer stream carries ids: the receiving side keeps them as sent, without hashing again.
    expect(transferOf(read.record, 'sent-id', 'prod').id).toBe('sent-id');
    expect(transferOf(read.record, undefined, 'prod').id).toBe(read.id);
  });

  it('hashes to 16 hex digits', () => {
    expect(recordIdentity(ok(wireRecord()).record)).toMatch(/^[0-9a-f]{16}$/);
  });

  // Identities are remembered across restarts and by replicas of other versions (poll windows' dedup, the
  // transfer stream): a change of the function must come with a new IDENTITY_VERSION, which PollStream.restore
  // reads state of the old one by. This fixes the function's output, so that no change of it goes unnoticed.
  it('keeps the identity of version 2 for a known record', () => {
    expect(recordIdentity(ok(wireRecord()).record)).toBe('5046bf51e95499eb');
  });

  it('keeps field boundaries, types and every bit of an integer apart', () => {
    const idOf = (v: Record<string, unknown>): string => ok(wireRecord(v)).id;
    const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ INSTANCE: 'PROD1', USUARIO: 'BANK1' }, { INSTANCE: 'PROD1B', USUARIO: 'ANK1' }],
      [{ CONEXAO: 'ab', DATAARQUIVO: 'c' }, { CONEXAO: 'a', DATAARQUIVO: 'bc' }],
      [{ MENSAGEM: 'a' }, { MENSAGEM: 'a\u0000' }],
      [{ NUMREG: null }, { NUMREG: 0 }],
      [{ MAXTAMREG: null, NUMREG: 7 }, { MAXTAMREG: 7, NUMREG: null }],
      [{ TAMARQUIVO: 1 }, { TAMARQUIVO: 2 ** 32 + 1 }],
      [{ RESULTADO: -1 }, { RESULTADO: 2 ** 32 - 1 }],
      [{ THREADID: -(2 ** 32) }, { THREADID: 0 }],
      [{ TAGS: 'x' }, { TIPOREC: 'x', TAGS: '' }],
    ];
    for (const [a, b] of pairs) expect(idOf(a), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).not.toBe(idOf(b));
  });

  it('gives 200,000 distinct transfers 200,000 distinct ids', () => {
    const ids = new Set<string>();
    const base = ok(wireRecord()).record;
    for (let i = 0; i < 200_000; i++) {
      // Transfers that differ little, as a busy partner's do: a second apart, a counter in the name, a size.
      const record = { ...base, DATAHORA: new Date(Date.UTC(2024, 4, 1) + (i % 1000) * 1000).toISOString(), NOMEARQUIVO: `/in/F_${i >> 3}.RET`, TAMARQUIVO: i & 7 };
      ids.add(recordIdentity(record));
    }
    expect(ids.size).toBe(200_000);
  });

  // Version 1 stays what it was: it is how state saved by earlier versions is read (PollStream.restore). Its
  // function is now the formula the next test writes again, so its output is pinned too.
  it('keeps the identity of version 1 for a known record (what 0.1.x saved)', () => {
    expect(recordIdentityV1(ok(wireRecord()).record)).toBe('3588bdb6b05b61ebf0727670f516f301');
  });

  it.each([
    wireRecord(),
    wireRecord({ MENSAGEM: 'quote " backslash \\ é 😀', NUMREG: null, TAGS: null, PROCID: '42', DIAS: 3 }),
    wireRecord({ DATAHORA: '2024-05-01 09:00:00-0300', EVENTO: 7, RESULTADO: -21, THREADID: 12 }),
  ])('keeps version 1 as SHA-256 over the JSON of the fields in IDENTITY_FIELDS order (%#)', (raw) => {
    const { record } = ok(raw);
    const expected = createHash('sha256').update(JSON.stringify(IDENTITY_FIELDS.map((f) => record[f]))).digest('hex').slice(0, 32);
    expect(recordIdentityV1(record)).toBe(expected);
    expect(IDENTITY_FIELDS).toHaveLength(Object.keys(record).length - 1); // every field but DIAS
  });
});
