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

describe('matchers sharing compiled pattern lists (one rule engine)', () => {
  it('answer for each transfer as if compiled alone, whatever the order of values and rules', () => {
    const shared = new Map<string, (value: string) => boolean>();
    const specs = [
      { mft_instance: ['PROD*'], user: ['BANK?'] },
      { mft_instance: ['PROD*'], file: ['*.RET'] },
      { user: ['BANK?'], file: ['*.RET'] },
      { mft_instance: ['PROD*'] },
    ];
    const together = specs.map((s) => compileMatch(s, shared));
    const alone = specs.map((s) => compileMatch(s));
    expect(shared.size).toBe(3); // PROD*, BANK?, *.RET compiled once each
    const transfers = [
      transfer({ time: 0, instance: 'PROD01', user: 'BANK1', file: 'A.RET' }),
      transfer({ time: 0, instance: 'TEST01', user: 'BANK1', file: 'A.REM' }),
      transfer({ time: 0, instance: 'PROD02', user: 'ACME', file: '/in/B.RET' }),
      transfer({ time: 0, instance: 'PROD02', user: 'BANK22', file: 'C.RET' }),
      transfer({ time: 0, instance: 'TEST01', user: 'BANK2', file: 'D.RET' }),
    ];
    for (const t of [...transfers, ...transfers.slice().reverse(), transfers[0], transfers[0], transfers[1]]) {
      for (let i = specs.length - 1; i >= 0; i--) expect(together[i]?.(t ?? transfers[0]!), `${i} ${t?.instance}`).toBe(alone[i]?.(t ?? transfers[0]!));
    }
    expect(together[0]?.(transfers[0]!)).toBe(true);
    expect(together[0]?.(transfers[1]!)).toBe(false);
  });
});
