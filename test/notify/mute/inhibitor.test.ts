import { describe, expect, it } from 'vitest';
import { Inhibitor } from '../../../src/notify/mute/inhibitor.js';
import { inhibitRuleSchema } from '../../../src/notify/dispatch/route-schema.js';
import { firing } from '../helpers.js';

describe('Inhibitor', () => {
  const inhibitor = new Inhibitor([
    inhibitRuleSchema.parse({ source_matchers: ['severity="critical"'], target_matchers: ['severity="warning"'], equal: ['mft_instance'] }),
  ]);

  it('inhibits targets with equal labels while the source fires', () => {
    const source = firing({ alertname: 'Burst', severity: 'critical', mft_instance: 'PROD1' });
    const sameInstance = firing({ alertname: 'Slow', severity: 'warning', mft_instance: 'PROD1' });
    const otherInstance = firing({ alertname: 'Slow', severity: 'warning', mft_instance: 'PROD2' });
    expect(inhibitor.inhibitedBy(sameInstance, [source, sameInstance])).toEqual([source.fingerprint]);
    expect(inhibitor.inhibitedBy(otherInstance, [source])).toEqual([]);
    expect(inhibitor.inhibitedBy(source, [source, sameInstance])).toEqual([]);
    expect(inhibitor.inhibitedBy(sameInstance, [{ ...source, state: 'resolved' }])).toEqual([]);
  });

  it('built in: TransferWatchSourceDown inhibits missing_file alerts of the same source only', () => {
    const down = firing({ alertname: 'TransferWatchSourceDown', source: 'prod', severity: 'critical' });
    const missing = firing({ alertname: 'DailyStatementMissing', source: 'prod', severity: 'warning' }, 0, { values: { rule_type: 'missing_file' } });
    const missingOther = firing({ alertname: 'DailyStatementMissing', source: 'dr', severity: 'warning' }, 0, { values: { rule_type: 'missing_file' } });
    const burst = firing({ alertname: 'TransferErrorBurst', source: 'prod', severity: 'warning' }, 0, { values: { rule_type: 'error_burst' } });
    const plain = new Inhibitor([]);
    expect(plain.inhibitedBy(missing, [down])).toEqual([down.fingerprint]);
    expect(plain.inhibitedBy(missingOther, [down])).toEqual([]);
    expect(plain.inhibitedBy(burst, [down])).toEqual([]);
    // Recognised by the values the missing_file rule sets, without an explicit rule_type.
    const unmarked = firing({ alertname: 'Late', source: 'prod' }, 0, { values: { deadline_ms: 1, min_count: 1, count: 0 } });
    expect(plain.inhibitedBy(unmarked, [down])).toEqual([down.fingerprint]);
    expect(plain.inhibitedBy(firing({ alertname: 'Other', source: 'prod' }), [down])).toEqual([]);
  });
});
