import { describe, expect, it } from 'vitest';
import { problemsOf, ruleHarness } from './rule-harness.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

const LISTED = `
rules:
  - name: AuthFailure
    type: error_code
    codes: [36]
    resolve_after: 30m
    severity: critical
`;

const NEW = `
rules:
  - name: NewErrorCode
    type: error_code
    new_codes: true
    learn_for: 1d
    resolve_after: 30m
`;

describe('error_code', () => {
  it('a listed code fires at once, one alert per user, with the latest MENSAGEM; other codes do not', () => {
    const { engine, step, firing } = ruleHarness(LISTED, T0);
    engine.observe(transfer({ time: T0 + MIN, code: 12, message: 'file not found' }));
    step(T0 + 2 * MIN);
    expect(firing()).toEqual([]);
    engine.observe(transfer({ time: T0 + 3 * MIN, code: 36, message: 'authentication failed', file: 'A.RET' }));
    engine.observe(transfer({ time: T0 + 4 * MIN, code: 36, message: 'authentication failed (key expired)', file: 'B.RET' }));
    step(T0 + 5 * MIN);
    const [alert, ...rest] = firing();
    expect(rest).toEqual([]);
    expect(alert?.labels).toEqual({ alertname: 'AuthFailure', severity: 'critical', user: 'BANK1' });
    expect(alert?.values).toMatchObject({ code: 36, message: 'authentication failed (key expired)', count: 2, reason: 'listed' });
    expect(alert?.annotations['summary']).toBe('Transfer failed with code 36: authentication failed (key expired)');
    expect(alert?.samples.map((s) => s.file)).toEqual(['B.RET', 'A.RET']);
  });

  it('resolves resolve_after after the last matching failure', () => {
    const { engine, step, firing } = ruleHarness(LISTED, T0);
    engine.observe(transfer({ time: T0, code: 36 }));
    step(T0 + 29 * MIN);
    expect(firing()).toHaveLength(1);
    expect(step(T0 + 30 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('new_codes: a code not seen for the group within learn_for fires; a known one almost does not', () => {
    const { engine, step, firing } = ruleHarness(NEW, T0 + 2 * HOUR * 24, { completeFrom: T0 });
    const now = T0 + 48 * HOUR;
    engine.observe(transfer({ time: now - 20 * HOUR, code: 12, user: 'BANK1' }));
    engine.observe(transfer({ time: now - 5 * MIN, code: 12, user: 'BANK1' })); // known for BANK1
    engine.observe(transfer({ time: now - 4 * MIN, code: 12, user: 'BANK2' })); // but new for BANK2
    engine.observe(transfer({ time: now - 3 * MIN, code: 99, user: 'BANK1', message: 'aborted by partner' }));
    step(now);
    const got = firing().map((a) => [a.labels['user'], a.values['code'], a.values['reason']]);
    expect(got.sort()).toEqual([
      ['BANK1', 99, 'new'],
      ['BANK2', 12, 'new'],
    ]);
  });

  it('new_codes: claims nothing where the data does not cover learn_for before the failure (first start)', () => {
    const now = T0 + 2 * HOUR;
    const { engine, step, firing } = ruleHarness(NEW, now, { completeFrom: T0 });
    engine.observe(transfer({ time: now - MIN, code: 99 }));
    step(now);
    expect(firing()).toEqual([]);
  });

  it('check: neither codes nor new_codes, and code 0, are reported at their positions', () => {
    expect(problemsOf(LISTED.replace('    codes: [36]\n', ''))).toEqual(['3:5: an error_code rule needs codes or new_codes: true']);
    expect(problemsOf(LISTED.replace('codes: [36]', 'codes: [36, 0]'))).toEqual(['5:17: codes.1: code 0 is success, not an error']);
  });
});
