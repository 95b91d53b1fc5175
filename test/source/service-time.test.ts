import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalServiceTime, formatServiceTime, parseServiceTime } from '../../src/source/service-time.js';

describe('parseServiceTime', () => {
  it.each([
    ['2024-05-01T12:00:00Z', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01T12:00:00', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01 12:00', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01T12:00:00.5Z', '2024-05-01T12:00:00.500Z'],
    ['2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00.123Z'],
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T12:00:00+0530', '2024-05-01T06:30:00.000Z'],
    ['2024-05-01T00:30:00-01', '2024-05-01T01:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(new Date(parseServiceTime(text) ?? Number.NaN).toISOString()).toBe(iso);
  });

  it.each(['', '2024-05-01', '2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-05-01T12:60:00Z', 'May 1 2024', '2024-05-01T12:00:00+25:00'])(
    'refuses %j',
    (text) => {
      expect(parseServiceTime(text)).toBeUndefined();
    },
  );
});

describe('canonicalServiceTime', () => {
  const two = (max: number) => fc.integer({ min: 0, max }).map((v) => String(v).padStart(2, '0'));
  // Canonical-looking text, with fields out of range as often as in it (month 13, day 31 of April, hour 24, second 60).
  const canonicalish = fc
    .tuple(fc.integer({ min: 0, max: 9999 }), two(19), two(39), two(29), two(69), two(69), fc.integer({ min: 0, max: 999 }))
    .map(([y, mo, d, h, mi, s, ms]) => `${String(y).padStart(4, '0')}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, '0')}Z`);
  const otherSpellings = fc.oneof(
    canonicalish.map((t) => t.replace('T', ' ')),
    canonicalish.map((t) => t.replace('Z', '+0300')),
    canonicalish.map((t) => t.slice(0, 19)),
    fc.string(),
  );

  it('reads a canonical text as the general parse does, and leaves every other spelling to it', () => {
    fc.assert(
      fc.property(fc.oneof(canonicalish, otherSpellings), (text) => {
        const slow = parseServiceTime(text);
        const fast = canonicalServiceTime(text);
        if (slow !== undefined && formatServiceTime(slow) === text && Number(text.slice(0, 4)) >= 100) expect(fast).toBe(slow);
        else expect(fast).toBeUndefined();
      }),
      { numRuns: 20_000 },
    );
  });

  it('reads each text of a run sharing minutes as it reads it alone (the last minute is remembered)', () => {
    // Minutes, some out of range (hour 24, February 30), and tails, some not canonical (second 60, a letter, no Z).
    // ... and minutes not canonical next to them (a separator or a digit changed), which must not pass for the last one.
    const minute = fc.constantFrom(
      '2024-05-01T12:00',
      '2024-05-01T12:01',
      '2024-05-01T24:00',
      '2023-02-30T00:00',
      '0099-01-01T00:00',
      '2024-05-01 12:00',
      '2024/05-01T12:00',
      '2024-05-01T12.00',
      '2024-05-0aT12:00',
      '2024-05-01T1:200',
      '2o24-05-01T12:00',
    );
    const tail = fc.oneof(
      fc.tuple(two(69), fc.integer({ min: 0, max: 999 })).map(([s, ms]) => `:${s}.${String(ms).padStart(3, '0')}Z`),
      fc.constantFrom(':0a.000Z', ':00.00aZ', ':00.000+', ':00,000Z', '-00.000Z', ':00.000Z '),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(minute, tail), { minLength: 1, maxLength: 20 }), (run) => {
        for (const [m, t] of run) {
          const text = m + t;
          const slow = parseServiceTime(text);
          const fast = canonicalServiceTime(text);
          if (slow !== undefined && formatServiceTime(slow) === text && Number(text.slice(0, 4)) >= 100) expect(fast).toBe(slow);
          else expect(fast).toBeUndefined();
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps a leap day and refuses the day after it in a common year', () => {
    expect(canonicalServiceTime('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    expect(canonicalServiceTime('2100-02-29T00:00:00.000Z')).toBeUndefined();
    expect(parseServiceTime('2100-02-29T00:00:00.000Z')).toBeUndefined();
    expect(canonicalServiceTime('2000-02-29T00:00:00.000Z')).toBe(Date.UTC(2000, 1, 29));
  });
});
