import { describe, expect, it } from 'vitest';
import type { Transfer } from '../../src/source/transfer.js';
import { ruleHarness } from './rule-harness.js';
import { MIN, transfer } from './transfer-fixture.js';

/**
 * After a restart the daemon re-reads `historyNeeded()` of history into a fresh engine and judges only windows
 * inside it. For every new type, that must give the same alerts as the engine that ran all along.
 */
const RULES = `
rules:
  - { name: Ratio, type: failure_ratio, group_by: [user], threshold: 0.5, min_total: 4, window: 30m }
  - { name: Quiet, type: volume, for_each: { label: user, values: [A, B, SILENT] }, window: 20m, min: 2 }
  - { name: Drop, type: volume, group_by: [user], window: 10m, compare_to: { offsets: [30m], ratio_below: 0.3, min_baseline: 5 } }
  - { name: Dup, type: duplicate_file, window: 1h }
  - { name: Size, type: size_anomaly, deviation: { factor: 10, min_samples: 3, history: 1h } }
  - { name: Auth, type: error_code, codes: [36], resolve_after: 30m }
  - { name: NewCode, type: error_code, new_codes: true, learn_for: 20m, resolve_after: 30m }
  - { name: Stuck, type: stuck_partner, failing_for: 10m, min_failures: 3, forget_after: 1h }
`;

const START = Date.parse('2026-11-20T08:00:00Z');
const RESTART = START + 3 * 60 * MIN;

function history(): Transfer[] {
  const out: Transfer[] = [];
  // Two hours of ordinary traffic for A and B, then trouble in the last hour.
  for (let m = 0; m < 180; m += 3) {
    out.push(transfer({ time: START + m * MIN, user: 'A', file: `A_${m}.RET`, size: 1000 }));
    out.push(transfer({ time: START + m * MIN + 1000, user: 'B', file: `B_${m}.RET`, size: 1000, code: m % 30 === 0 ? 12 : 0 }));
  }
  const at = (minutesBeforeRestart: number) => RESTART - minutesBeforeRestart * MIN;
  for (const m of [20, 17, 15, 9]) out.push(transfer({ time: at(m), user: 'C', code: 4 }));
  out.push(transfer({ time: at(12), user: 'B', file: 'B_12.RET', size: 1000 })); // B's duplicate of ...
  out.push(transfer({ time: at(11), user: 'B', file: 'B_12.RET', size: 1000 }));
  out.push(transfer({ time: at(5), user: 'A', file: 'A_EMPTY.RET', size: 20 }));
  out.push(transfer({ time: at(4), user: 'D', code: 36, message: 'authentication failed' }));
  out.push(transfer({ time: at(3), user: 'A', code: 99, message: 'aborted by partner' }));
  for (let i = 0; i < 8; i++) out.push(transfer({ time: at(35) + i * 1000, user: 'E', code: 21 }));
  return out.sort((a, b) => a.time - b.time);
}

function firingAt(h: ReturnType<typeof ruleHarness>): string[] {
  return h
    .firing()
    .map((a) => `${a.labels['alertname']} ${JSON.stringify(a.labels)} ${JSON.stringify(a.values)}`)
    .sort();
}

describe('new rule types after a restart', () => {
  it('a fresh engine fed historyNeeded() of history fires exactly what the long-running one does', () => {
    const records = history();
    const running = ruleHarness(RULES, START, { completeFrom: START });
    let next = 0;
    for (let now = START; now <= RESTART; now += MIN) {
      while (next < records.length && (records[next] as Transfer).time <= now) running.engine.observe(records[next++] as Transfer);
      running.step(now);
    }
    const before = firingAt(running);
    // Something of every type is firing, or the comparison proves little.
    expect(new Set(running.firing().map((a) => a.labels['alertname']))).toEqual(new Set(['Ratio', 'Quiet', 'Dup', 'Size', 'Auth', 'NewCode', 'Stuck', 'Drop']));

    const probe = ruleHarness(RULES, RESTART);
    const replayFrom = RESTART - probe.engine.historyNeeded();
    const restarted = ruleHarness(RULES, RESTART, { completeFrom: replayFrom });
    for (const t of records) if (t.time > replayFrom) restarted.engine.observe(t);
    restarted.step(RESTART);
    expect(firingAt(restarted)).toEqual(before);
  });
});
