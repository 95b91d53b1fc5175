import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { groupKey, groupLabels } from '../../src/rules/group-key.js';
import { TransferParts } from '../../src/rules/transfer-parts.js';
import { sampleOf } from '../../src/rules/transfer-samples.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

describe('TransferParts', () => {
  it('derives a transfer’s sample and group keys once, and again for the next transfer', () => {
    const parts = new TransferParts();
    const a = transfer({ time: T0, user: 'BANK1', file: 'A.RET', code: 36 });
    const b = transfer({ time: T0 + 1, user: 'BANK2', file: 'B.RET', code: 36 });
    expect(parts.sample(a)).toBe(parts.sample(a));
    expect(parts.sample(a)).toEqual(sampleOf(a));
    expect(parts.sample(b)).toEqual(sampleOf(b));
    expect(parts.sample(b)).not.toBe(parts.sample(a));

    const byUser = parts.groupKeyOf(['mft_instance', 'user']);
    // Another rule's list with the same labels gets the same function; another order or set, its own.
    expect(parts.groupKeyOf(['mft_instance', 'user'])).toBe(byUser);
    const byFile = parts.groupKeyOf(['file']);
    expect(parts.groupKeyOf(['user', 'mft_instance'])).not.toBe(byUser);
    for (const t of [a, b, a]) {
      expect(byUser(t)).toBe(groupKey(t, ['mft_instance', 'user']));
      expect(byFile(t)).toBe(groupKey(t, ['file']));
    }

    // Group labels in the same way: one object per transfer for every rule grouping by the same labels.
    const labelsByUser = parts.groupLabelsOf(['mft_instance', 'user']);
    expect(parts.groupLabelsOf(['mft_instance', 'user'])).toBe(labelsByUser);
    expect(labelsByUser(a)).toBe(labelsByUser(a));
    expect(labelsByUser(a)).toEqual(groupLabels(a, ['mft_instance', 'user']));
    expect(labelsByUser(b)).toEqual({ mft_instance: 'PROD01', user: 'BANK2' });
    expect(parts.groupLabelsOf(['file'])(a)).toEqual({ file: 'A.RET' });
  });

  it('a rule engine’s rules that keep one transfer keep one sample of it, and their groups stay their own', () => {
    const rules = rulesFrom(
      [
        'rules:',
        '  - { name: ByUser, type: error_burst, group_by: [user], threshold: 1, window: 5m }',
        '  - { name: ByUserToo, type: error_burst, match: { user: [BANK1, BANK2] }, group_by: [user], threshold: 2, window: 5m }',
        '  - { name: ByFile, type: error_burst, group_by: [file], threshold: 1, window: 5m }',
      ].join('\n'),
    );
    const engine = new RuleEngine(rules, { clock: new ManualClock(T0 + 1000), logger: silentLogger(), sources: ['prod'] });
    engine.observe(transfer({ time: T0, user: 'BANK1', file: 'A.RET', code: 36 }));
    engine.observe(transfer({ time: T0 + 1, user: 'BANK1', file: 'B.RET', code: 36 }));
    engine.observe(transfer({ time: T0 + 2, user: 'BANK2', file: 'A.RET', code: 36 }));
    const byRule = new Map(engine.evaluate(T0 + 1000, { completeUntil: () => T0 + 1000 }).map((e) => [e.rule, e.alerts]));
    const groups = (rule: string) => (byRule.get(rule) ?? []).map((a) => `${JSON.stringify(a.labels['user'] ?? a.labels['file'])}:${String(a.values['count'])}`).sort();
    expect(groups('ByUser')).toEqual(['"BANK1":2', '"BANK2":1']);
    expect(groups('ByUserToo')).toEqual(['"BANK1":2']);
    expect(groups('ByFile')).toEqual(['"A.RET":2', '"B.RET":1']);
    const latest = (rule: string, label: string, value: string) => byRule.get(rule)?.find((a) => a.labels[label] === value)?.samples[0];
    expect(latest('ByUser', 'user', 'BANK1')).toBe(latest('ByUserToo', 'user', 'BANK1'));
    expect(latest('ByUser', 'user', 'BANK1')).toBe(latest('ByFile', 'file', 'B.RET'));
    expect(latest('ByUser', 'user', 'BANK1')).toMatchObject({ user: 'BANK1', file: 'B.RET' });
  });
});
