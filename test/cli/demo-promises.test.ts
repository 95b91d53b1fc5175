import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { demoMorning } from '../../src/cli/demo.js';
import { loadRuleFiles } from '../../src/rules/load-rules.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { HistoryGenerator } from '../../src/simulator/generator.js';
import { getScenario } from '../../src/simulator/scenarios.js';
import { transferOf } from '../../src/source/record.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

/**
 * The demo's banner promises, within three minutes of its start (07:59:15 São Paulo): BANK2's statement missing at
 * 08:00 and resolved as arrived late; the 08:00 position file late and arriving at 08:01; an error burst firing.
 * The shipped rules on the demo scenario, as the demo polls it (every 5 s, 1 s behind, 9 h of history read at
 * start), on several days (the scenario differs by day; its promises must not).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PROMISE_MS = 3 * 60_000;
/** A firing alert is notified after group_wait (5 s), a resolved one within group_interval (10 s): what changed later is not seen in time. */
const SEEN_BY_MS = PROMISE_MS - 10_000;

async function demoRun(day: string): Promise<Map<string, { firedAt?: number; resolvedAt?: number; arrivedAt?: unknown }>> {
  const start = demoMorning(Date.parse(`${day}T15:00:00Z`));
  const { rules } = await loadRuleFiles(['*.yaml'], path.join(root, 'rules'));
  const historyStart = start - 9 * 3_600_000;
  const generator = new HistoryGenerator({ seed: 1, scenario: getScenario('demo'), ratePerMinute: 20, historyStart: historyStart - 3_600_000 });
  const clock = new ManualClock(start);
  const engine = new RuleEngine(rules, { clock, logger: silentLogger(), sources: ['demo'], displayTimezone: 'UTC' });
  const store = new AlertStore({ clock, logger: silentLogger(), state: new MemoryStateStore() });
  const seen = new Map<string, { firedAt?: number; resolvedAt?: number; arrivedAt?: unknown }>();
  let readUntil = historyStart;
  for (let now = start; now <= start + PROMISE_MS; now += 5_000) {
    clock.set(now);
    const horizon = now - 1_000;
    for (let bucket = Math.floor(readUntil / 60_000); bucket <= Math.floor(horizon / 60_000); bucket++) {
      for (const e of generator.bucket(bucket)) {
        if (e.time <= readUntil || e.time > horizon) continue;
        engine.observe(transferOf({ ...e.record, DIAS: null }, `${e.time}:${e.seq}`, 'demo'));
      }
    }
    readUntil = horizon;
    store.apply(engine.evaluate(now, { completeUntil: () => horizon, completeFrom: () => historyStart }), now);
    for (const a of store.alerts()) {
      if (a.state === 'pending') continue;
      const key = `${a.labels['alertname']}${a.labels['phase'] ? `/${a.labels['phase']}` : ''}{${a.labels['user'] ?? ''}}`;
      const entry = seen.get(key) ?? {};
      if (a.firedAt !== undefined && a.firedAt >= start) entry.firedAt ??= a.firedAt;
      if (a.state === 'resolved' && a.resolvedAt !== undefined) {
        entry.resolvedAt ??= a.resolvedAt;
        entry.arrivedAt ??= a.values['arrived_at_ms'];
      }
      seen.set(key, entry);
    }
  }
  return seen;
}

describe('the demo keeps the promises of its banner within three minutes', () => {
  for (const day of ['2026-11-24', '2026-11-26', '2026-12-04']) {
    it(`on ${day}`, async () => {
      const start = demoMorning(Date.parse(`${day}T15:00:00Z`));
      const seen = await demoRun(day);
      const by = start + SEEN_BY_MS;
      const statement = seen.get('DailyStatementMissing{BANK2}');
      expect(statement?.firedAt, 'the statement missing at 08:00').toBeLessThanOrEqual(by);
      expect(statement?.resolvedAt, 'then arrived late').toBeLessThanOrEqual(by);
      expect(typeof statement?.arrivedAt).toBe('number');
      const position = seen.get('PositionFileLate{}');
      expect(position?.firedAt, 'the 08:00 position file late').toBeLessThanOrEqual(by);
      expect(position?.resolvedAt, 'and arriving at 08:01').toBeLessThanOrEqual(by);
      const bursts = [...seen.entries()].filter(([k, v]) => k.startsWith('TransferErrorBurst') && v.firedAt !== undefined && v.firedAt <= by);
      expect(bursts.length, 'an error burst fires').toBeGreaterThanOrEqual(1);
    }, 60_000);
  }
});
