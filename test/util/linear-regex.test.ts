import { describe, expect, it } from 'vitest';
import { parseMatcher, matchesAll, parseMatchers } from '../../src/notify/matcher.js';
import fc from 'fast-check';
import { compileMatch, globToRe2, simpleGlob } from '../../src/rules/match.js';
import { compileLinearRegex, RegexSyntaxError } from '../../src/util/linear-regex.js';
import { transfer } from '../rules/transfer-fixture.js';

const T = Date.parse('2026-11-25T10:00:00Z');

/**
 * Patterns that take a backtracking engine (V8's RegExp) seconds to minutes on short input. Each is matched here
 * against input long enough that a backtracking engine would not finish within the test's timeout; RE2 answers
 * in linear time. (Measured before the change: the first one took 6.7 s on a 60-character value, the glob 24 s.)
 */
describe('linear-time matching', () => {
  it('an Alertmanager matcher with nested quantifiers answers at once on a long label value', () => {
    const m = parseMatcher('user=~"PARTNER_ABCDEFGHIJ(.*.*)*!"');
    const labels = { user: `PARTNER_ABCDEFGHIJ${'x'.repeat(5_000)}` };
    expect(matchesAll([m], labels)).toBe(false);
    expect(matchesAll([m], { user: 'PARTNER_ABCDEFGHIJxx!' })).toBe(true);
    const silenceMatcher = parseMatcher('user=~"(.*.*)*X"');
    expect(matchesAll([silenceMatcher], { user: 'a'.repeat(10_000) })).toBe(false);
  }, 2_000);

  it('keeps Alertmanager semantics: anchored at both ends, (?i) accepted, absent label is ""', () => {
    expect(matchesAll(parseMatchers('mft_instance=~"PROD.*"'), { mft_instance: 'XPROD1' })).toBe(false);
    expect(matchesAll(parseMatchers('mft_instance=~"PROD.*"'), { mft_instance: 'PROD1' })).toBe(true);
    expect(matchesAll(parseMatchers('user=~"(?i)bank1"'), { user: 'BANK1' })).toBe(true);
    expect(matchesAll(parseMatchers('team!~".+"'), {})).toBe(true);
  });

  it('refuses what RE2 does not accept (backreferences, lookarounds) when the matcher is parsed, naming the pattern', () => {
    expect(() => parseMatcher('user=~"(a)\\\\1"')).toThrow(/invalid regular expression "\(a\)\\\\1": invalid escape sequence/);
    expect(() => parseMatcher('user=~"(?=a)b"')).toThrow(/invalid or unsupported Perl syntax/);
    expect(() => compileLinearRegex('x'.repeat(5_000))).toThrow(RegexSyntaxError);
  });

  it('a rule glob with several * answers at once on a crafted 8 KB file name, and keeps its meaning', () => {
    const match = compileMatch({ file: ['*_*_*.RET'] });
    const crafted = '_'.repeat(8_192);
    expect(match(transfer({ time: T, file: crafted }))).toBe(false);
    expect(match(transfer({ time: T, file: `${crafted}.RET` }))).toBe(true);
    expect(match(transfer({ time: T, file: '/in/BANK1/RET_001_X.RET' }))).toBe(true);
    expect(match(transfer({ time: T, file: 'RET_001.RET' }))).toBe(false);
    // `*` and `?` do not cross `/`; every other character is literal.
    expect(compileMatch({ file: ['a*b'] })(transfer({ time: T, file: 'a/x/b' }))).toBe(false);
    expect(compileMatch({ file: ['A|B.RET'] })(transfer({ time: T, file: 'A|B.RET' }))).toBe(true);
    expect(compileMatch({ file: ['EXTRATO (?).RET'] })(transfer({ time: T, file: 'EXTRATO (1).RET' }))).toBe(true);
    expect(compileMatch({ file: ['[ab].RET'] })(transfer({ time: T, file: 'a.RET' }))).toBe(false);
  }, 2_000);
});

describe('globs matched in place', () => {
  it('answers as the RE2 translation does, on generated globs and values', () => {
    const alphabet = fc.constantFrom('A', 'B', '_', '.', '/', 'R');
    const text = fc.array(alphabet, { maxLength: 6 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text, text, fc.array(fc.tuple(text, fc.boolean()), { maxLength: 4 }), (prefix, suffix, values) => {
        const glob = `${prefix}*${suffix}`;
        const fast = simpleGlob(glob);
        const re2 = globToRe2(glob);
        expect(fast).toBeDefined();
        for (const [middle, framed] of values) {
          const value = framed ? `${prefix}${middle}${suffix}` : middle;
          expect(fast?.matches(value), `${glob} on ${value}`).toBe(re2.matches(value));
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('answers as the RE2 translation does for any glob of stars and question marks, astral characters included', () => {
    // '😀' is two code units and one code point: a `?` on it is decided by RE2.
    const alphabet = fc.constantFrom('A', 'B', '_', '.', '/', 'R', '😀');
    const text = fc.array(alphabet, { maxLength: 4 }).map((a) => a.join(''));
    const glob = fc
      .array(fc.oneof(fc.constantFrom('*', '?', '**'), fc.constantFrom('A', 'B', '_', '.', '/', 'R')), { minLength: 1, maxLength: 7 })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(glob, fc.array(fc.tuple(text, text, text), { maxLength: 6 }), (pattern, values) => {
        const fast = simpleGlob(pattern);
        const re2 = globToRe2(pattern);
        expect(fast).toBeDefined();
        // Values made of the glob's own pieces with text between them, so that most are near misses or matches.
        const pieces = pattern.split(/[*?]/);
        for (const [a, b, c] of values) {
          for (const value of [a + b, pieces.join(b), `${a}${pieces.join(c)}${b}`, pattern.replaceAll('*', a).replaceAll('?', c.slice(0, 1))]) {
            expect(fast?.matches(value), `${pattern} on ${value}`).toBe(re2.matches(value));
          }
        }
      }),
      { numRuns: 3_000 },
    );
    expect(simpleGlob('😀*')).toBeUndefined();
    expect(simpleGlob('BANK?')?.matches('BANK1')).toBe(true);
    expect(simpleGlob('BANK?')?.matches('BANK😀')).toBe(true);
    expect(simpleGlob('BANK?')?.matches('BANK/')).toBe(false);
    expect(simpleGlob('BANK?')?.matches('BANK12')).toBe(false);
  });
});
