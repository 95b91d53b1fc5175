import { describe, expect, it } from 'vitest';
import { ruleHarness } from './rule-harness.js';
import { MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

/** 50 partner-specific rules of each new type, as a large installation writes them. */
function manyRules(): string {
  const lines = ['rules:'];
  for (let i = 0; i < 50; i++) {
    const m = `match: { user: [P${i}] }`;
    lines.push(`  - { name: R${i}, type: failure_ratio, ${m}, threshold: 0.5, min_total: 2, window: 10m }`);
    lines.push(`  - { name: V${i}, type: volume, ${m}, window: 10m, max: 1 }`);
    lines.push(`  - { name: D${i}, type: duplicate_file, ${m}, window: 10m }`);
    lines.push(`  - { name: S${i}, type: size_anomaly, ${m} }`);
    lines.push(`  - { name: E${i}, type: error_code, ${m}, codes: [36] }`);
    lines.push(`  - { name: K${i}, type: stuck_partner, ${m}, failing_for: 1m, min_failures: 2 }`);
  }
  return lines.join('\n');
}

describe('exact-value index with the new rule types', () => {
  it('a record visits only the rules of its own partner, and those rules still fire', () => {
    const h = ruleHarness(manyRules(), T0);
    h.engine.observe(transfer({ time: T0 + MIN, user: 'P7', code: 36, file: 'X.RET' }));
    // P7's rules share one selection (`user: [P7]`): one matcher run for the four that look at failures
    // (duplicate_file and size_anomaly keep successes only), not 300 and not 4.
    expect(h.engine.matchChecks).toBe(1);
    h.engine.observe(transfer({ time: T0 + 2 * MIN, user: 'P7', code: 36, file: 'X.RET' }));
    h.engine.observe(transfer({ time: T0 + 3 * MIN, user: 'NOBODY', code: 36 }));
    expect(h.engine.matchChecks).toBe(2);
    h.engine.observe(transfer({ time: T0 + 3 * MIN, user: 'P7', size: 0 }));
    expect(h.engine.matchChecks).toBe(3); // a success: one run for the five that look at successes
    h.step(T0 + 4 * MIN);
    const names = h.firing().map((a) => a.labels['alertname']).sort();
    // P7: 2 of 3 failed, 3 transfers > max 1, code 36, an empty file; the success at 3m ended the streak.
    expect(names).toEqual(['E7', 'R7', 'S7', 'V7']);
  });
});
