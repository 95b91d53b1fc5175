import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRecord } from '../../src/source/record.js';
import type { ServiceRecord } from '../../src/source/transfer.js';

const INT_FIELDS = ['EVENTO', 'MAXTAMREG', 'NUMREG', 'PROCID', 'RESULTADO', 'TAMARQUIVO', 'THREADID', 'DIAS'] as const;

const text = fc.string({ maxLength: 12 });
const int = fc.integer({ min: -1_000_000, max: 1_000_000_000 });
const record: fc.Arbitrary<ServiceRecord> = fc.record({
  DATAHORA: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }).map((ms) => new Date(ms).toISOString()),
  INSTANCE: text,
  USUARIO: text,
  CONEXAO: text,
  DATAARQUIVO: text,
  EVENTO: fc.constantFrom(5, 7, 9),
  HORAARQUIVO: text,
  MAXTAMREG: fc.option(int, { nil: null }),
  NUMREG: fc.option(int, { nil: null }),
  MENSAGEM: text,
  NOMEARQUIVO: text,
  TAGS: text,
  PROCID: fc.option(int, { nil: null }),
  REDE: text,
  RESULTADO: fc.integer({ min: 0, max: 99 }),
  TAMARQUIVO: fc.nat(),
  THREADID: fc.option(int, { nil: null }),
  TIPOREC: text,
  DIAS: fc.option(fc.nat({ max: 400 }), { nil: null }),
});

/** The spellings a service has been seen to use for the same values. */
interface Spelling {
  numericStrings: boolean[];
  padded: boolean;
  zone: 'Z' | 'none' | '+00:00' | '+0000' | 'space-none';
  millis: boolean;
  dias: number | null;
}
const spelling: fc.Arbitrary<Spelling> = fc.record({
  numericStrings: fc.array(fc.boolean(), { minLength: INT_FIELDS.length, maxLength: INT_FIELDS.length }),
  padded: fc.boolean(),
  zone: fc.constantFrom('Z', 'none', '+00:00', '+0000', 'space-none'),
  millis: fc.boolean(),
  dias: fc.option(fc.nat({ max: 10_000 }), { nil: null }),
});

function respell(r: ServiceRecord, s: Spelling): Record<string, unknown> {
  const out: Record<string, unknown> = { ...r };
  INT_FIELDS.forEach((field, i) => {
    const v = r[field];
    if (typeof v === 'number' && s.numericStrings[i]) out[field] = s.padded ? ` ${v} ` : String(v);
  });
  const iso = r.DATAHORA; // 2024-05-01T12:00:00.123Z
  const base = s.millis || !iso.endsWith('.000Z') ? iso.slice(0, -1) : iso.slice(0, 19);
  out['DATAHORA'] =
    s.zone === 'Z' ? `${base}Z` : s.zone === 'none' ? base : s.zone === 'space-none' ? base.replace('T', ' ') : `${base}${s.zone}`;
  out['DIAS'] = s.dias;
  return out;
}

describe('record normaliser (properties)', () => {
  it('the identity does not change with numeric strings, zone-less or offset timestamps, or another DIAS', () => {
    fc.assert(
      fc.property(record, spelling, (r, s) => {
        const canonical = parseRecord(r, 'prod');
        const respelled = parseRecord(respell(r, s), 'prod');
        expect(canonical.ok && respelled.ok).toBe(true);
        if (!canonical.ok || !respelled.ok) return;
        expect(respelled.transfer.id).toBe(canonical.transfer.id);
        expect(respelled.transfer.time).toBe(Date.parse(r.DATAHORA));
        expect({ ...respelled.transfer.record, DIAS: null }).toEqual({ ...canonical.transfer.record, DIAS: null });
      }),
      { numRuns: 300 },
    );
  });

  it('a change of any identity field changes the identity', () => {
    const fields = ['INSTANCE', 'USUARIO', 'MENSAGEM', 'NOMEARQUIVO', 'RESULTADO', 'TAMARQUIVO', 'DATAHORA'] as const;
    fc.assert(
      fc.property(record, fc.constantFrom(...fields), (r, field) => {
        const changed: Record<string, unknown> = { ...r };
        const v = r[field];
        changed[field] = field === 'DATAHORA' ? new Date(Date.parse(r.DATAHORA) + 1).toISOString() : typeof v === 'number' ? v + 1 : `${String(v)}x`;
        const a = parseRecord(r, 'prod');
        const b = parseRecord(changed, 'prod');
        expect(a.ok && b.ok && a.transfer.id !== b.transfer.id).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on arbitrary JSON, and what it accepts is a well-formed transfer', () => {
    const field = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.integer().map(String), fc.constant('2024-05-01T12:00:00'));
    const recordish = fc.dictionary(fc.constantFrom('DATAHORA', 'INSTANCE', 'USUARIO', 'EVENTO', 'NOMEARQUIVO', 'RESULTADO', 'TAMARQUIVO', 'DIAS', 'PROCID', 'MENSAGEM', 'x'), field);
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 3 }), recordish), (raw) => {
        const result = parseRecord(raw, 'prod');
        if (!result.ok) {
          expect(result.reason.length).toBeGreaterThan(0);
          return;
        }
        const t = result.transfer;
        expect(Number.isFinite(t.time)).toBe(true);
        expect(Number.isSafeInteger(t.code) && Number.isSafeInteger(t.eventCode) && Number.isSafeInteger(t.size)).toBe(true);
        expect(t.id).toMatch(/^[0-9a-f]{16}$/);
        expect(t.record.DATAHORA).toBe(new Date(t.time).toISOString());
      }),
      { numRuns: 400 },
    );
  });
});
