import { describe, expect, it } from 'vitest';
import type { DataCompleteness } from '../../src/rules/rule-evaluator.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from '../rules/rule-fixture.js';
import { HOUR, MIN, transfer } from '../rules/transfer-fixture.js';

/** RuleEngine.expectations(): the read-only view of missing_file rules that the status page shows. */

const RULES = `
rules:
  - name: StatementMissing
    type: missing_file
    match: { event: [reception], file: ["EXTRATO_*.RET"] }
    deadline: "0 8 * * 1-5"
    timezone: America/Sao_Paulo
    window: 8h
    severity: warning
  - name: PartnerFileMissing
    type: missing_file
    match: { file: ["*.REM"] }
    deadline: "0 10 * * *"
    timezone: UTC
    window: 4h
    for_each: { label: user, values: [BANK1, BANK2] }
    severity: warning
  - name: Burst
    type: error_burst
    match: {}
    threshold: 3
    window: 10m
    severity: critical
`;

// Monday 2026-11-23, 08:00 in Sao Paulo (UTC-3) is 11:00 UTC.
const MONDAY_MIDNIGHT_SP = Date.parse('2026-11-23T03:00:00Z');
const SP_DEADLINE = Date.parse('2026-11-23T11:00:00Z');
const UTC_DEADLINE = Date.parse('2026-11-23T10:00:00Z');

function setup(start: number) {
  const clock = new ManualClock(start);
  const engine = new RuleEngine(rulesFrom(RULES), { clock, logger: silentLogger(), sources: ['prod'] });
  const data = (until: number): DataCompleteness => ({ completeUntil: () => until, completeFrom: () => start - 12 * HOUR });
  return { clock, engine, data };
}

describe('RuleEngine.expectations', () => {
  it('lists not-due files before the deadline, one per for_each value, and nothing for other rule types', () => {
    const { clock, engine, data } = setup(MONDAY_MIDNIGHT_SP);
    const now = MONDAY_MIDNIGHT_SP + HOUR;
    clock.set(now);
    const rows = engine.expectations(now, data(now));
    expect(rows.map((r) => [r.rule, r.key?.value, r.status])).toEqual([
      ['StatementMissing', undefined, 'not_due'],
      ['PartnerFileMissing', 'BANK1', 'not_due'],
      ['PartnerFileMissing', 'BANK2', 'not_due'],
    ]);
    expect(rows[0]).toMatchObject({ deadline: SP_DEADLINE, timezone: 'America/Sao_Paulo', files: ['EXTRATO_*.RET'], minCount: 1, count: 0 });
    expect(rows[1]).toMatchObject({ key: { label: 'user', value: 'BANK1' }, deadline: UTC_DEADLINE });
  });

  it('says arrived (with when), late (with when), missing and awaiting data after the deadline', () => {
    const { clock, engine, data } = setup(MONDAY_MIDNIGHT_SP);
    const arrived = SP_DEADLINE - 2 * HOUR;
    engine.observe(transfer({ id: 'statement', time: arrived, file: 'EXTRATO_1.RET', event: 'reception' }));
    const late = UTC_DEADLINE + 30 * MIN;
    engine.observe(transfer({ id: 'late-bank1', time: late, file: 'PAY.REM', user: 'BANK1' }));
    const now = SP_DEADLINE + HOUR;
    clock.set(now);
    const rows = engine.expectations(now, data(now));
    const byKey = new Map(rows.map((r) => [`${r.rule}/${r.key?.value ?? ''}`, r]));
    expect(byKey.get('StatementMissing/')).toMatchObject({ status: 'arrived', arrivedAt: arrived, count: 1 });
    expect(byKey.get('PartnerFileMissing/BANK1')).toMatchObject({ status: 'late', arrivedAt: late, count: 0 });
    expect(byKey.get('PartnerFileMissing/BANK2')).toMatchObject({ status: 'missing', count: 0 });
    expect(byKey.get('PartnerFileMissing/BANK2')?.arrivedAt).toBeUndefined();

    // Data read only up to before the deadline: nothing is claimed missing.
    const incomplete = engine.expectations(now, data(UTC_DEADLINE - MIN));
    expect(incomplete.find((r) => r.key?.value === 'BANK2')?.status).toBe('awaiting_data');
  });

  it('says in jeopardy, not "not due yet", once the warn_before of a rule has begun and the file has not come', () => {
    const clock = new ManualClock(MONDAY_MIDNIGHT_SP);
    const rules = RULES.replace('    window: 8h\n    severity: warning\n  - name: PartnerFileMissing', '    window: 8h\n    warn_before: 30m\n    severity: warning\n  - name: PartnerFileMissing');
    expect(rules).toContain('warn_before: 30m');
    const engine = new RuleEngine(rulesFrom(rules), { clock, logger: silentLogger(), sources: ['prod'] });
    const data = (until: number): DataCompleteness => ({ completeUntil: () => until, completeFrom: () => MONDAY_MIDNIGHT_SP - 12 * HOUR });
    const status = (now: number) => {
      clock.set(now);
      return engine.expectations(now, data(now)).find((r) => r.rule === 'StatementMissing')?.status;
    };
    expect(status(SP_DEADLINE - 31 * MIN)).toBe('not_due');
    expect(status(SP_DEADLINE - 29 * MIN)).toBe('in_jeopardy');
    engine.observe(transfer({ id: 'statement', time: SP_DEADLINE - 10 * MIN, file: 'EXTRATO_1.RET', event: 'reception' }));
    expect(status(SP_DEADLINE - 9 * MIN)).toBe('arrived');
  });
});
