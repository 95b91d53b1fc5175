import { describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { fingerprint } from '../../src/alerts/fingerprint.js';
import { AlertBuilder } from '../../src/rules/alert-builder.js';
import type { RuleBase } from '../../src/rules/rule-schema.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

function rule(labels: Record<string, string>): RuleBase {
  return { name: 'Burst', type: 'error_burst', match: {}, severity: 'warning', labels, annotations: { summary: '{{count}} for {{labels.user}} ({{labels.team}})' } } as RuleBase;
}

describe('AlertBuilder', () => {
  it('gives a group the same label set and fingerprint at every build while its labels are the same', () => {
    const builder = new AlertBuilder(rule({ team: 'payments' }), {});
    const group = { user: 'BANK1' };
    const first = builder.build({ groupLabels: group, values: { count: 3 } });
    const second = builder.build({ groupLabels: group, values: { count: 4 } });
    expect(second.labels).toBe(first.labels);
    expect(second.fingerprint).toBe(fingerprint(first.labels));
    expect(first.labels).toEqual({ alertname: 'Burst', severity: 'warning', user: 'BANK1', team: 'payments' });
    expect(second.annotations['summary']).toBe('4 for BANK1 (payments)');
    // Another group, another severity or extra labels: their own label sets.
    expect(builder.build({ groupLabels: { user: 'BANK2' }, values: { count: 3 } }).labels['user']).toBe('BANK2');
    expect(builder.build({ groupLabels: group, values: { count: 3 }, severity: 'critical' }).labels).toMatchObject({ severity: 'critical', user: 'BANK1' });
    expect(builder.build({ groupLabels: group, values: { count: 3 } }).labels['severity']).toBe('warning');
    expect(builder.build({ groupLabels: group, values: { count: 3 }, extraLabels: { file: 'A.RET' } }).labels).toMatchObject({ file: 'A.RET', user: 'BANK1' });
  });

  it('renders templated labels at every build (they may name values that change)', () => {
    const builder = new AlertBuilder(rule({ team: 'payments', size: '{{#if big}}big{{else}}small{{/if}}', who: '{{labels.user}}' }), {});
    const group = { user: 'BANK1' };
    const small = builder.build({ groupLabels: group, values: { count: 3, big: '' } });
    const big = builder.build({ groupLabels: group, values: { count: 30, big: 'yes' } });
    expect(small.labels).toMatchObject({ size: 'small', who: 'BANK1' });
    expect(big.labels).toMatchObject({ size: 'big', who: 'BANK1' });
    expect(big.fingerprint).toBe(fingerprint(big.labels));
    expect(small.fingerprint).not.toBe(big.fingerprint);
  });

  it('builds a group again only when what it is built from changed (values, samples, a display value a template reads)', () => {
    const builder = new AlertBuilder({ ...rule({}), annotations: { summary: '{{count}} by {{window_end}}' } } as RuleBase, { description: '{{count}} failures' });
    const group = { user: 'BANK1' };
    const sample = { time: 1, file: 'A', code: 4, message: 'x', user: 'BANK1', instance: 'P1' };
    const first = builder.build({ groupLabels: group, values: { count: 3 }, display: { window_end: '10:00', window_start: '09:50' }, samples: [sample] });
    // Same values and samples, a display value no template reads moved: the very same candidate.
    expect(builder.build({ groupLabels: group, values: { count: 3 }, display: { window_end: '10:00', window_start: '09:51' }, samples: [sample] })).toBe(first);
    // A read display value moved: rendered again.
    const later = builder.build({ groupLabels: group, values: { count: 3 }, display: { window_end: '10:01', window_start: '09:51' }, samples: [sample] });
    expect(later).not.toBe(first);
    expect(later.annotations['summary']).toBe('3 by 10:01');
    expect(later.labels).toBe(first.labels);
    // A new sample, or a new count: rendered again.
    const withSample = builder.build({ groupLabels: group, values: { count: 3 }, display: { window_end: '10:01' }, samples: [sample, { ...sample, time: 2 }] });
    expect(withSample).not.toBe(later);
    expect(withSample.samples).toHaveLength(2);
    const more = builder.build({ groupLabels: group, values: { count: 4 }, display: { window_end: '10:01' }, samples: withSample.samples });
    expect(more.annotations).toEqual({ summary: '4 by 10:01', description: '4 failures' });
    expect(more.values).toEqual({ rule_type: 'error_burst', count: 4 });
  });

  it('lets the alert store keep one alert per group across evaluations, fingerprinted as before', () => {
    const clock = new ManualClock(1_000_000);
    const store = new AlertStore({ clock, logger: silentLogger(), state: new MemoryStateStore() });
    const builder = new AlertBuilder(rule({ team: 'payments' }), {});
    const group = { user: 'BANK1' };
    for (let i = 0; i < 3; i++) store.apply([{ rule: 'Burst', alerts: [builder.build({ groupLabels: group, values: { count: 3 + i } })] }], clock.now() + i * 1000);
    const alerts = store.alerts();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.fingerprint).toBe(fingerprint({ alertname: 'Burst', severity: 'warning', user: 'BANK1', team: 'payments' }));
    expect(alerts[0]?.annotations['summary']).toBe('5 for BANK1 (payments)');
  });
});
