import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { compileMatch } from '../../src/rules/match.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

function manyRules(n: number): string {
  const lines = ['rules:'];
  for (let i = 0; i < n; i++) {
    lines.push(`  - name: User${i}Burst`, '    type: error_burst', `    match: { user: [PARTNER${i}], event: [reception] }`, '    threshold: 1', '    window: 5m');
  }
  lines.push('  - name: AnyProdBurst', '    type: error_burst', '    match: { mft_instance: ["PROD*"] }', '    threshold: 1', '    window: 5m');
  return lines.join('\n');
}

describe('rule index', () => {
  it('a record visits only the rules whose exact values it has, plus glob-only rules', () => {
    const engine = new RuleEngine(rulesFrom(manyRules(200)), { clock: new ManualClock(T0), logger: silentLogger(), sources: ['prod'] });
    engine.observe(transfer({ time: T0, user: 'PARTNER7', code: 36 }));
    // PARTNER7's rule and the glob rule: 2 full match checks, not 201.
    expect(engine.matchChecks).toBe(2);
    engine.observe(transfer({ time: T0, user: 'NOBODY', code: 36 }));
    expect(engine.matchChecks).toBe(3);
    const fired = engine.evaluate(T0, { completeUntil: () => T0 }).filter((e) => e.alerts.length > 0).map((e) => e.rule);
    expect(fired.sort()).toEqual(['AnyProdBurst', 'User7Burst']);
  });

  it('rules with the same selection, however written, run one matcher and all see what it matches', () => {
    const rules = rulesFrom(
      [
        'rules:',
        '  - { name: Warn, type: error_burst, match: { user: [BANK1], file: ["*.RET", "*.REM"] }, threshold: 1, window: 5m, severity: warning }',
        // The same selection: labels and patterns in another order, a pattern twice.
        '  - { name: Crit, type: error_burst, match: { file: ["*.REM", "*.RET", "*.REM"], user: [BANK1] }, threshold: 2, window: 5m }',
        '  - { name: Ratio, type: failure_ratio, match: { user: [BANK1], file: ["*.RET", "*.REM"] }, threshold: 0.5, min_total: 1, window: 5m }',
        // Another selection under the same index value: its own matcher run.
        '  - { name: RetOnly, type: error_burst, match: { user: [BANK1], file: ["*.RET"] }, threshold: 1, window: 5m }',
      ].join('\n'),
    );
    const engine = new RuleEngine(rules, { clock: new ManualClock(T0), logger: silentLogger(), sources: ['prod'] });
    engine.observe(transfer({ time: T0, user: 'BANK1', file: 'A.REM', code: 36 }));
    expect(engine.matchChecks).toBe(2);
    engine.observe(transfer({ time: T0, user: 'BANK1', file: 'B.REM', code: 36 }));
    engine.observe(transfer({ time: T0, user: 'BANK1', file: 'C.txt', code: 36 }));
    expect(engine.matchChecks).toBe(6);
    const fired = engine.evaluate(T0, { completeUntil: () => T0 }).filter((e) => e.alerts.length > 0).map((e) => e.rule);
    // Two .REM failures: the threshold-1 and threshold-2 bursts and the ratio; the .RET-only rule saw neither.
    expect(fired.sort()).toEqual(['Crit', 'Ratio', 'Warn']);
  });

  it('an indexed rule still applies its other conditions', () => {
    const engine = new RuleEngine(rulesFrom(manyRules(3)), { clock: new ManualClock(T0), logger: silentLogger(), sources: ['prod'] });
    engine.observe(transfer({ time: T0, user: 'PARTNER1', eventCode: 5, instance: 'HOM01', code: 36 }));
    expect(engine.evaluate(T0, { completeUntil: () => T0 }).filter((e) => e.alerts.length > 0)).toEqual([]);
  });
});

describe('match', () => {
  it('uses glob lists per label; absent labels match everything; file patterns match base names of paths', () => {
    const m = compileMatch({ user: ['BANK?', 'ACME_*'], file: ['EXTRATO_*.RET'] });
    expect(m(transfer({ time: T0, user: 'BANK1', file: 'EXTRATO_20261120.RET' }))).toBe(true);
    expect(m(transfer({ time: T0, user: 'ACME_EDI', file: '/in/bank/EXTRATO_20261120.RET' }))).toBe(true);
    expect(m(transfer({ time: T0, user: 'BANK10', file: 'EXTRATO_20261120.RET' }))).toBe(false);
    expect(m(transfer({ time: T0, user: 'BANK1', file: 'EXTRATO_20261120.REM' }))).toBe(false);
    expect(compileMatch({ code: ['36'] })(transfer({ time: T0, code: 36 }))).toBe(true);
    expect(compileMatch({})(transfer({ time: T0 }))).toBe(true);
  });
});
