import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/base/duration.js';
import { TransferWatchError } from '../../src/util/errors.js';

const UNITS: Array<[string, number]> = [
  ['w', 604_800_000],
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
];

describe('duration parser (properties)', () => {
  it('format then parse gives the same milliseconds, and formatting is stable', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 45 }), (ms) => {
        const text = formatDuration(ms);
        expect(parseDuration(text)).toBe(ms);
        expect(formatDuration(parseDuration(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('a compound written largest unit first parses to the sum of its parts', () => {
    const counts = fc.array(fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }), { minLength: UNITS.length, maxLength: UNITS.length });
    fc.assert(
      fc.property(counts, fc.constantFrom('', ' ', '\t'), (ns, pad) => {
        const parts = UNITS.flatMap(([unit, size], i) => (ns[i] === undefined ? [] : [{ text: `${ns[i]}${unit}`, ms: ns[i] * size }]));
        fc.pre(parts.length > 0);
        const text = parts.map((p) => p.text).join('');
        expect(parseDuration(`${pad}${text}${pad}`)).toBe(parts.reduce((sum, p) => sum + p.ms, 0));
      }),
      { numRuns: 200 },
    );
  });

  it('any other text is refused with a typed error, never a crash or a wrong number', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (text) => {
        let value: number | undefined;
        try {
          value = parseDuration(text);
        } catch (err) {
          expect(err).toBeInstanceOf(TransferWatchError);
          expect((err as TransferWatchError).code).toBe('invalid_duration');
          return;
        }
        // Accepted: it must be a non-negative safe integer that formats back to an equivalent duration.
        expect(Number.isSafeInteger(value)).toBe(true);
        expect(value).toBeGreaterThanOrEqual(0);
        expect(parseDuration(formatDuration(value))).toBe(value);
      }),
      { numRuns: 300 },
    );
  });
});
