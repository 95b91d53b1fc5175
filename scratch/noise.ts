import path from 'node:path';
import { AlertStore } from '../src/alerts/alert-store.js';
import { loadRuleFiles } from '../src/rules/load-rules.js';
import { RuleEngine } from '../src/rules/rule-engine.js';
import { HistoryGenerator } from '../src/simulator/generator.js';
import { getScenario, type ScenarioName } from '../src/simulator/scenarios.js';
import { recordIdentity, transferOf } from '../src/source/record.js';
import { MemoryStateStore } from '../src/state/state-store.js';
import { ManualClock } from '../src/util/clock.js';
import { silentLogger } from '../src/util/logger.js';

const scenario = (process.argv[2] ?? 'steady') as ScenarioName;
const days = Number(process.argv[3] ?? 22);
const warm = Number(process.argv[4] ?? 8);
const step = Number(process.env.STEP ?? 60_000);
const { rules, problems } = await loadRuleFiles(['*.yaml'], path.resolve('rules'));
if (problems.length) throw new Error(JSON.stringify(problems));
const start = Date.parse('2026-10-12T03:00:00Z'); // Monday 00:00 Sao Paulo
const gen = new HistoryGenerator({ seed: 7, scenario: getScenario(scenario), ratePerMinute: 20, historyStart: start });
const clock = new ManualClock(start);
const logger = silentLogger();
const engine = new RuleEngine(rules, { clock, logger, sources: ['sim'] });
const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
const fired = new Map<string, { at: number; labels: Record<string, string>; summary: string }[]>();
const seen = new Set<string>();
const t0 = Date.now();
let n = 0;
for (let now = start; now <= start + days * 86_400_000; now += step) {
  clock.set(now);
  for (let b = Math.floor((now - step) / 60_000); b < Math.floor(now / 60_000); b++) {
    for (const e of gen.bucket(b)) {
      const rec = { ...e.record, DIAS: null };
      engine.observe(transferOf(rec, recordIdentity(rec), 'sim'));
      n++;
    }
  }
  store.apply(engine.evaluate(now, { completeUntil: () => now, completeFrom: () => start }), now);
  if (now < start + warm * 86_400_000) continue;
  for (const a of store.alerts()) {
    if (a.state !== 'firing') continue;
    const key = `${a.fingerprint}@${a.firedAt}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const name = a.labels['alertname'] ?? '?';
    const list = fired.get(name) ?? [];
    list.push({ at: a.firedAt ?? now, labels: a.labels, summary: a.annotations['summary'] ?? '' });
    fired.set(name, list);
  }
}
console.log(`${n} transfers, ${Date.now() - t0} ms`);
for (const [name, list] of fired) {
  console.log(`${name}: ${list.length}`);
  for (const x of list.slice(0, 4)) console.log(`   ${new Date(x.at).toISOString()} ${JSON.stringify(x.labels)} ${x.summary}`);
}
