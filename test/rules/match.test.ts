import { describe, expect, it } from 'vitest';
import { compileMatch } from '../../src/rules/match.js';
import { transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

describe('match patterns on paths', () => {
  it('a pattern with "/" matches the whole path; one without matches the whole value or its base name', () => {
    const full = compileMatch({ file: ['/in/*/EXTRATO_*.RET'] });
    expect(full(transfer({ time: T0, file: '/in/BANK1/EXTRATO_20261120.RET' }))).toBe(true);
    expect(full(transfer({ time: T0, file: '/out/BANK1/EXTRATO_20261120.RET' }))).toBe(false);
    expect(full(transfer({ time: T0, file: 'EXTRATO_20261120.RET' }))).toBe(false);
    const base = compileMatch({ file: ['EXTRATO_*.RET', 'FOLHA_*'] });
    expect(base(transfer({ time: T0, file: '/in/BANK1/EXTRATO_20261120.RET' }))).toBe(true);
    expect(base(transfer({ time: T0, file: '/out/PAYROLL/FOLHA_202611_0002.txt' }))).toBe(true);
    expect(base(transfer({ time: T0, file: '/in/EXTRATO_X/other.RET' }))).toBe(false);
    expect(base(transfer({ time: T0, file: '' }))).toBe(false);
  });

  it('dot files and exact values match as before', () => {
    expect(compileMatch({ file: ['*.RET'] })(transfer({ time: T0, file: '/in/.hidden.RET' }))).toBe(true);
    expect(compileMatch({ user: ['BANK1'] })(transfer({ time: T0, user: 'BANK1' }))).toBe(true);
    expect(compileMatch({ user: ['BANK1'] })(transfer({ time: T0, user: 'BANK10' }))).toBe(false);
  });
});
