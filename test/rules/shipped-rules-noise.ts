import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { loadRuleFiles } from '../../src/rules/load-rules.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { HistoryGenerator } from '../../src/simulator/generator.js';
import { getScenario, type ScenarioName } from '../../src/simulator/scenarios.js';
import { transferOf } from '../../src/source/record.js';
import type { Transfer } from '../../src/source/transfer.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

/**
 * The noise test of the shipped rules (shipped-rules-noise-*.test.ts, one file per scenario so they run in
 * parallel). The rules we ship are what users copy: a false alarm here is a false alarm in every deployment. Every file of
 * `rules/`, run by the real engine over the simulator's scenarios (at its default 20 transfers a minute), must
 * fire only what the scenario really contains, each listed below with why it is true:
 *
 * - steady (scattered 2% failures, statements and position files on time): nothing at all, for 10 business days;
 * - burst (every 15 minutes one partner's connection breaks: 8 failures in 2 minutes): TransferErrorBurst for each
 *   planned burst of that partner on its instance, and PartnerFailureRatio only for a partner whose burst made a
 *   quarter of its transfers fail in the half hour after it;
 * - late-file: PositionFileLate at exactly the deadlines no position file arrived in the ten minutes before, and
 *   for DailyStatementMissing BANK2's statement (it comes after 08:30) on each business day the rule's calendar
 *   keeps: the 07:30 "in jeopardy" warning, then the 08:00 missing alert.
 *
 * Measured: the 10 business days after an 8-day warm-up (baselines of a week for volumes, a day for new codes).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MINUTE = 60_000;
const DAY = 86_400_000;
/** Monday 2026-10-12 00:00 in America/Sao_Paulo. */
const START = Date.parse('2026-10-12T03:00:00Z');
const WARM_UP_DAYS = 8;
/** Tuesday 2026-10-20 .. Tuesday 2026-11-03 (to Wednesday's 00:00): 10 business days once the calendar's 2026-11-02 is left out. */
const MEASURED_DAYS = 15;
export const MEASURE_FROM = START + WARM_UP_DAYS * DAY;
export const MEASURE_TO = MEASURE_FROM + MEASURED_DAYS * DAY;

export interface Fired {
  alertname: string;
  labels: Record<string, string>;
  firedAt: number;
}

export async function runScenario(name: ScenarioName, stepMs: number): Promise<{ fired: Fired[]; generator: HistoryGenerator; arrivals: Transfer[] }> {
  const { rules, problems } = await loadRuleFiles(['*.yaml'], path.join(root, 'rules'));
  expect(problems).toEqual([]);
  const generator = new HistoryGenerator({ seed: 7, scenario: getScenario(name), ratePerMinute: 20, historyStart: START });
  const clock = new ManualClock(START);
  const logger = silentLogger();
  const engine = new RuleEngine(rules, { clock, logger, sources: ['sim'] });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  const fired: Fired[] = [];
  const seen = new Set<string>();
  const arrivals: Transfer[] = [];
  for (let now = START + stepMs; now <= MEASURE_TO; now += stepMs) {
    clock.set(now);
    for (let bucket = (now - stepMs) / MINUTE; bucket < now / MINUTE; bucket++) {
      for (const e of generator.bucket(bucket)) {
        // The generator's (time, seq) is unique: a cheaper identity than hashing 600,000 records.
        const t = transferOf({ ...e.record, DIAS: null }, `${e.time}:${e.seq}`, 'sim');
        if (t.user === 'CUSTODIA' && t.file.includes('/POSICAO_')) arrivals.push(t);
        engine.observe(t);
      }
    }
    store.apply(engine.evaluate(now, { completeUntil: () => now, completeFrom: () => START }), now);
    if (now < MEASURE_FROM) continue;
    for (const a of store.alerts()) {
      if (a.state !== 'firing' || a.firedAt === undefined || a.firedAt < MEASURE_FROM) continue;
      const key = `${a.fingerprint}@${a.firedAt}`;
      if (seen.has(key)) continue;
      seen.add(key);
      fired.push({ alertname: a.labels['alertname'] ?? '', labels: a.labels, firedAt: a.firedAt });
    }
  }
  return { fired, generator, arrivals };
}

export function names(fired: Fired[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of fired) out[f.alertname] = (out[f.alertname] ?? 0) + 1;
  return out;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

