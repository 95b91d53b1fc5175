import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { IDENTITY_FIELDS, parseRecord, recordIdentity } from '../../src/source/record.js';
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

  it('hashes to 32 hex digits', () => {
    expect(recordIdentity(ok(wireRecord()).record)).toMatch(/^[0-9a-f]{32}$/);
  });

  // Identities are remembered across restarts and upgrades (poll windows' dedup, replicas' streams): the
  // written-out field list must hash exactly what SHA-256 over the JSON of IDENTITY_FIELDS' values did.
  it.each([
    wireRecord(),
    wireRecord({ MENSAGEM: 'quote " backslash \\ é 😀', NUMREG: null, TAGS: null, PROCID: '42', DIAS: 3 }),
    wireRecord({ DATAHORA: '2024-05-01 09:00:00-0300', EVENTO: 7, RESULTADO: -21, THREADID: 12 }),
  ])('keeps the identity of SHA-256 over the JSON of the fields in IDENTITY_FIELDS order (%#)', (raw) => {
    const { record } = ok(raw);
    const expected = createHash('sha256').update(JSON.stringify(IDENTITY_FIELDS.map((f) => record[f]))).digest('hex').slice(0, 32);
    expect(recordIdentity(record)).toBe(expected);
    expect(IDENTITY_FIELDS).toHaveLength(Object.keys(record).length - 1); // every field but DIAS
  });
});
