import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeCounts } from '../../src/rules/time-counts.js';

type Op = { add: number; n: number } | { drop: number } | { count: [number, number] } | { after: number };

/** The reference: every occurrence in a plain list. */
class ListCounts {
  times: number[] = [];
  constructor(private readonly resolution = 1) {}
  add(t: number, n: number): void {
    for (let i = 0; i < n; i++) this.times.push(Math.ceil(t / this.resolution) * this.resolution);
  }
  drop(t: number): void {
    this.times = this.times.filter((x) => x > t);
  }
  countIn(from: number, to: number): number {
    return this.times.filter((x) => x > from && x <= to).length;
  }
}

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ add: fc.integer({ min: 0, max: 400 }), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ drop: fc.integer({ min: -10, max: 400 }) }) },
  { weight: 2, arbitrary: fc.record({ count: fc.tuple(fc.integer({ min: -10, max: 410 }), fc.integer({ min: -10, max: 410 })) }) },
  { weight: 1, arbitrary: fc.record({ after: fc.integer({ min: -10, max: 410 }) }) },
);

describe('TimeCounts', () => {
  for (const resolution of [1, 7]) {
    it(`counts like the list of every occurrence, in any order of adds, drops and late records (resolution ${resolution})`, () => {
      fc.assert(
        fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
          const counts = new TimeCounts(resolution, 2);
          const list = new ListCounts(resolution);
          for (const o of ops) {
            if ('add' in o) {
              counts.add(o.add, o.n);
              list.add(o.add, o.n);
            } else if ('drop' in o) {
              counts.dropUpTo(o.drop);
              list.drop(o.drop);
            } else if ('count' in o) {
              expect(counts.countIn(o.count[0], o.count[1])).toBe(list.countIn(o.count[0], o.count[1]));
            } else {
              expect(counts.countAfter(o.after)).toBe(list.countIn(o.after, Infinity));
            }
            expect(counts.size).toBe(list.times.length);
            expect(counts.entries).toBe(new Set(list.times).size);
            expect(counts.latest).toBe(list.times.length ? Math.max(...list.times) : undefined);
            expect(counts.earliest).toBe(list.times.length ? Math.min(...list.times) : undefined);
          }
        }),
        { numRuns: 300 },
      );
    });
  }

  it('keeps one entry per distinct time and gives memory back once the window has moved on', () => {
    const counts = new TimeCounts();
    for (let t = 0; t < 100_000; t++) counts.add(Math.floor(t / 100) * 1000);
    expect(counts.size).toBe(100_000);
    expect(counts.entries).toBe(1000);
    counts.dropUpTo(998_000);
    expect(counts.size).toBe(100);
    expect(counts.countIn(998_000, 999_000)).toBe(100);
    // The arrays shrank with what they hold (16 bytes an entry): a later busy second does not need the old room.
    for (let t = 0; t < 50; t++) counts.add(1_000_000 + t);
    expect(counts.entries).toBe(51);
    expect(counts.countIn(0, 2_000_000)).toBe(150);
  });
});
