import { describe, expect, it } from 'vitest';
import { compileMatch, exactValues } from '../../src/rules/match.js';
import { transfer } from './transfer-fixture.js';

describe('match globs: only * and ? are special', () => {
  it('a file name with parentheses, |, +, braces or brackets matches itself as a pattern, and nothing else', () => {
    const files = ['/in/BANK1/EXTRATO (1).RET', '/in/BANK1/A|B.RET', '/in/BANK1/C++.RET', '/in/BANK1/{a,b}.RET', '/in/BANK1/[x].RET', '/in/BANK1/$^.RET'];
    for (const file of files) {
      const base = file.slice(file.lastIndexOf('/') + 1);
      expect(compileMatch({ file: [base.replace('.RET', '*')] })(transfer({ file, time: 0 })), base).toBe(true);
    }
    // picomatch read `*|A` as "anything, or A" and `X (1).RET` as `X 1.RET`.
    expect(compileMatch({ file: ['*|B.RET'] })(transfer({ file: '/in/BANK1/B.RET', time: 0 }))).toBe(false);
    expect(compileMatch({ file: ['X (1)*'] })(transfer({ file: 'X 1.RET', time: 0 }))).toBe(false);
    expect(compileMatch({ file: ['{a,b}*'] })(transfer({ file: 'a.RET', time: 0 }))).toBe(false);
  });

  it('patterns without * or ? are exact values (for the rule index), whatever else they contain', () => {
    expect(exactValues(['EXTRATO (1).RET', 'A|B', '{a,b}'])).toEqual(['EXTRATO (1).RET', 'A|B', '{a,b}']);
    expect(exactValues(['A', 'B*'])).toBeUndefined();
  });
});
