import { describe, expect, it } from 'vitest';
import { escapePlain } from '../../src/notify/templates/escape.js';
import { buildTemplateContext } from '../../src/notify/templates/template-context.js';
import { defaultText } from '../../src/notify/templates/default-text.js';
import { notificationOf } from '../notify/integrations/notification-fixture.js';
import { ruleHarness } from './rule-harness.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

/** The default plain-text message of the first firing alert of a harness. */
function messageOf(h: ReturnType<typeof ruleHarness>): string {
  const [alert] = h.firing();
  if (!alert) throw new Error('no firing alert');
  return defaultText(buildTemplateContext(notificationOf([alert]), escapePlain));
}

describe('default messages of the new rule types', () => {
  it('duplicate_file lists the copies as transfers, not failures', () => {
    const h = ruleHarness('rules:\n  - name: Dup\n    type: duplicate_file\n    window: 1h\n', T0);
    for (const m of [1, 2]) h.engine.observe(transfer({ time: T0 + m * MIN, file: 'PAG_1.REM' }));
    h.step(T0 + 3 * MIN);
    const text = messageOf(h);
    expect(text).toContain('Summary: PAG_1.REM transferred 2 times in 1h');
    expect(text).toContain('Transfers (2 most recent):');
    expect(text).not.toContain('Failed transfer');
    expect(text).not.toMatch(/Count: \d+ failed/);
  });

  it('volume shows its window with the zone and no failure count', () => {
    const h = ruleHarness('rules:\n  - name: Quiet\n    type: volume\n    window: 2h\n    min: 1\n', T0, { completeFrom: T0 });
    h.step(T0 + 2 * HOUR);
    const text = messageOf(h);
    expect(text).toContain('Summary: 0 transfers in 2h (low volume: min 1)');
    expect(text).toContain('Window: 2h, from 2026-11-20 10:00:00 UTC to 2026-11-20 12:00:00 UTC');
    expect(text).not.toContain('failed');
  });

  it('failure_ratio and stuck_partner count failures and show the failed transfers', () => {
    const ratio = ruleHarness('rules:\n  - name: Ratio\n    type: failure_ratio\n    threshold: 0.5\n    min_total: 2\n    window: 10m\n', T0);
    ratio.engine.observe(transfer({ time: T0 + MIN, code: 21, message: 'timeout' }));
    ratio.engine.observe(transfer({ time: T0 + 2 * MIN }));
    ratio.step(T0 + 3 * MIN);
    const text = messageOf(ratio);
    expect(text).toContain('Summary: 50% of transfers failed (1 of 2) in 10m');
    expect(text).toContain('Count: 1 failed transfer in 10m');
    expect(text).toContain('Failed transfer:');

    const stuck = ruleHarness('rules:\n  - name: Stuck\n    type: stuck_partner\n    failing_for: 20m\n    min_failures: 2\n', T0);
    for (const m of [0, 20]) stuck.engine.observe(transfer({ time: T0 + m * MIN, code: 4, message: 'connection refused' }));
    stuck.step(T0 + 25 * MIN);
    expect(messageOf(stuck)).toContain('Count: 2 failed transfers in 25m, from 2026-11-20 10:00:00 UTC to 2026-11-20 10:25:00 UTC');
  });
});
