import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeenTransfers } from '../../src/util/seen-transfers.js';

/**
 * The poller's id table against a plain Map: any run of adds and prunes gives the same answers. Pools of 1,000
 * to 3,000 ids and prunes up to a minute behind keep the default table (2,048 slots) and its first doubling
 * well filled, so clusters wrap around the table's end and a prune has to put entries back across it (starting
 * its walk anywhere but at an empty slot, or not putting back the entries behind a hole, makes this test fail).
 */

/** Adds of ids from a pool, at a clock that advances `rate` ids a second; prunes `lag` seconds behind it. */
type Op = { kind: 'add'; id: number; jitter: number } | { kind: 'prune'; lag: number };

const op = (pool: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 30, arbitrary: fc.record({ kind: fc.constant('add' as const), id: fc.nat(pool - 1), jitter: fc.nat(5) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune' as const), lag: fc.integer({ min: 10, max: 60 }) }) },
  );

/** Ids as the record normaliser makes them (32 hex digits of a SHA-256: keys read from the digits). */
const hexIds = Array.from({ length: 3_000 }, (_, n) => createHash('sha256').update(`transfer ${n}`).digest('hex').slice(0, 32));
/** Hex ids, or other strings (keys hashed), as the poller meets both. */
const idText = (n: number, hex: boolean): string => (hex ? (hexIds[n] as string) : `transfer-${n}`);

const runs = fc.record({
  hex: fc.boolean(),
  rate: fc.integer({ min: 20, max: 60 }),
  ops: fc.integer({ min: 1_000, max: 3_000 }).chain((pool) => fc.array(op(pool), { minLength: 2_000, maxLength: 5_000 })),
});

describe('SeenTransfers (properties)', () => {
  it('answers add, has and size as a Map of id to second would, through any adds and prunes', () => {
    fc.assert(
      fc.property(runs, ({ hex, rate, ops }) => {
        const seen = new SeenTransfers();
        const model = new Map<string, number>();
        for (const [step, o] of ops.entries()) {
          const second = Math.floor(step / rate) + 10;
          if (o.kind === 'add') {
            const id = idText(o.id, hex);
            const fresh = !model.has(id);
            if (fresh) model.set(id, second - o.jitter);
            expect(seen.add(id, (second - o.jitter) * 1000 + 999)).toBe(fresh);
          } else {
            seen.prune((second - o.lag) * 1000);
            for (const [id, s] of model) if (s < second - o.lag) model.delete(id);
            expect(seen.size).toBe(model.size);
          }
        }
        for (let n = 0; n < 3_000; n += 7) expect(seen.has(idText(n, hex))).toBe(model.has(idText(n, hex)));
        expect(seen.size).toBe(model.size);
      }),
      { numRuns: 60, interruptAfterTimeLimit: 15_000 },
    );
  });

  it('shrinks back after a large window once windows are small again, and keeps every recent id', () => {
    const seen = new SeenTransfers();
    for (let i = 0; i < 50_000; i++) seen.add(`big-${i}`, 1_000);
    const grown = seen.capacity;
    let second = 2;
    for (let round = 0; round < 10; round++, second++) {
      seen.prune(second * 1000);
      seen.add(`small-${round}`, second * 1000);
    }
    expect(seen.capacity).toBeLessThan(grown / 4);
    expect(seen.size).toBe(1);
    expect(seen.has('small-9')).toBe(true);
    expect(seen.has('big-1')).toBe(false);
  });
});
