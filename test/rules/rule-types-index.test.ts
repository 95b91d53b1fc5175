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
    expect(h.engine.matchChecks).toBe(6); // 6 rules for P7, not 300
    h.engine.observe(transfer({ time: T0 + 2 * MIN, user: 'P7', code: 36, file: 'X.RET' }));
    h.engine.observe(transfer({ time: T0 + 3 * MIN, user: 'NOBODY', code: 36 }));
    expect(h.engine.matchChecks).toBe(12);
    h.step(T0 + 4 * MIN);
    const names = h.firing().map((a) => a.labels['alertname']).sort();
    // P7: 2 of 2 failed, 2 transfers > max 1, code 36, failing for 1m; no duplicate or size check on failures.
    expect(names).toEqual(['E7', 'K7', 'R7', 'V7']);
  });
});
