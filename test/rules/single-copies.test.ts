import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SingleCopies, type SingleCopy } from '../../src/rules/single-copies.js';

type Op = { put: string; time: number } | { take: string } | { prune: number };

describe('SingleCopies', () => {
  it('answers like a Map through any order of puts, takes and prunes, growing and shrinking', () => {
    const key = fc.constantFrom(...Array.from({ length: 600 }, (_, i) => `BANK${i % 7}\u0000REM_${i}.REM\u0000${i * 13}`));
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 8, arbitrary: fc.record({ put: key, time: fc.integer({ min: 0, max: 1000 }) }) },
      { weight: 3, arbitrary: fc.record({ take: key }) },
      { weight: 1, arbitrary: fc.record({ prune: fc.integer({ min: 0, max: 1000 }) }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 2000 }), (ops) => {
        const table = new SingleCopies(4);
        const model = new Map<string, SingleCopy>();
        for (const o of ops) {
          if ('put' in o) {
            const copy = { time: o.time, user: o.put.slice(0, 5), instance: `PROD0${o.time % 3}`, message: o.time % 2 ? 'OK' : 'Transferido' };
            table.put(o.put, copy);
            model.set(o.put, copy);
          } else if ('take' in o) {
            expect(table.take(o.take)).toEqual(model.get(o.take));
            model.delete(o.take);
          } else {
            table.pruneUpTo(o.prune);
            for (const [k, v] of model) if (v.time <= o.prune) model.delete(k);
          }
          expect(table.size).toBe(model.size);
        }
        for (const [k, v] of model) expect(table.take(k)).toEqual(v);
        expect(table.size).toBe(0);
      }),
      { numRuns: 100 },
    );
  });
});
