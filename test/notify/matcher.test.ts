import { describe, expect, it } from 'vitest';
import { formatMatcher, matchesAll, matcherMatches, MatcherError, parseMatcher, parseMatchers } from '../../src/notify/matcher.js';
import { hasCode } from '../../src/util/errors.js';

describe('parseMatcher', () => {
  it('reads the four operators', () => {
    expect(parseMatcher('severity="critical"')).toMatchObject({ name: 'severity', type: '=', value: 'critical' });
    expect(parseMatcher('severity!="info"')).toMatchObject({ type: '!=', value: 'info' });
    expect(parseMatcher('mft_instance=~"PROD.*"')).toMatchObject({ type: '=~', value: 'PROD.*' });
    expect(parseMatcher('user!~"BANK[0-9]+"')).toMatchObject({ type: '!~', value: 'BANK[0-9]+' });
  });

  it('accepts spaces, bare values and escapes in quoted values', () => {
    expect(parseMatcher('  team = treasury ')).toMatchObject({ name: 'team', type: '=', value: 'treasury' });
    expect(parseMatcher('file="a \\"quoted\\" name\\\\x"')).toMatchObject({ value: 'a "quoted" name\\x' });
    expect(parseMatcher('file="a,b}"')).toMatchObject({ value: 'a,b}' });
  });

  it('round-trips through formatMatcher', () => {
    const m = parseMatcher('file=~"EXTRATO_.*\\\\.RET"');
    expect(parseMatcher(formatMatcher(m))).toMatchObject({ name: m.name, type: m.type, value: m.value });
  });

  it('reports errors with a stable code and a column', () => {
    const bad = ['="x"', 'severity', 'severity=="x"x', 'file="unterminated', 'x=~"(("', '1abc="x"', 'a="b" c'];
    for (const text of bad) {
      let caught: unknown;
      try {
        parseMatcher(text);
      } catch (err) {
        caught = err;
      }
      expect(caught, text).toBeInstanceOf(MatcherError);
      expect(hasCode(caught, 'matcher_invalid')).toBe(true);
      expect((caught as MatcherError).col).toBeGreaterThanOrEqual(1);
    }
    try {
      parseMatcher('severity');
    } catch (err) {
      expect((err as MatcherError).col).toBe(9);
    }
  });
});

describe('parseMatchers', () => {
  it('reads lists with or without braces', () => {
    expect(parseMatchers('{a="1", b=~"x|y"}').map(formatMatcher)).toEqual(['a="1"', 'b=~"x|y"']);
    expect(parseMatchers('a="1",b!="2"').map((m) => m.type)).toEqual(['=', '!=']);
    expect(parseMatchers('{}')).toEqual([]);
    expect(() => parseMatchers('{a="1"')).toThrow(MatcherError);
  });
});

describe('matching', () => {
  const labels = { alertname: 'TransferErrorBurst', mft_instance: 'PROD1', severity: 'critical' };

  it('anchors regexes and treats absent labels as empty', () => {
    expect(matcherMatches(parseMatcher('mft_instance=~"PROD.*"'), labels)).toBe(true);
    expect(matcherMatches(parseMatcher('mft_instance=~"ROD"'), labels)).toBe(false);
    expect(matcherMatches(parseMatcher('mft_instance!~"PROD1|PROD2"'), labels)).toBe(false);
    expect(matcherMatches(parseMatcher('team=""'), labels)).toBe(true);
    expect(matcherMatches(parseMatcher('team!=""'), labels)).toBe(false);
    expect(matcherMatches(parseMatcher('severity!="warning"'), labels)).toBe(true);
  });

  it('requires every matcher of a list', () => {
    expect(matchesAll(parseMatchers('severity="critical", mft_instance=~"PROD.*"'), labels)).toBe(true);
    expect(matchesAll(parseMatchers('severity="critical", mft_instance="DEV"'), labels)).toBe(false);
    expect(matchesAll([], labels)).toBe(true);
  });
});
