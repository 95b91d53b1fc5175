import { describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { DEDUP_SPAN, RuleEngine } from '../../src/rules/rule-engine.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { completeUntil, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const DUPLICATE = `
rules:
  - name: DuplicatePayment
    type: duplicate_file
    match: { event: [transmission] }
    window: 1d
    severity: critical
`;

function setup() {
  const clock = new ManualClock(T0);
  const logger = silentLogger();
  const engine = new RuleEngine(rulesFrom(DUPLICATE), { clock, logger, sources: ['prod'] });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  const firing = (at: number): string[] => {
    clock.set(at);
    store.apply(engine.evaluate(at, completeUntil(at)), at);
    return store.alerts().filter((a) => a.state === 'firing').map((a) => a.labels['file'] ?? '');
  };
  return { clock, engine, firing };
}

describe('RuleEngine deduplication', () => {
  it('counts a transfer handed on twice once: the same transfer is no duplicate file', () => {
    const { engine, firing } = setup();
    const t = transfer({ time: T0 - 5 * MIN, eventCode: 5, file: 'REM_1.REM', size: 10 });
    engine.observe(t);
    engine.observe(t); // a re-read racing the live poll
    expect(firing(T0)).toEqual([]);
    // A real second copy (another transfer of the same file) is one.
    engine.observe(transfer({ time: T0 - 1 * MIN, eventCode: 5, file: 'REM_1.REM', size: 10 }));
    expect(firing(T0)).toEqual(['REM_1.REM']);
  });

  it('remembers ids until their transfer is DEDUP_SPAN old, not for the rule’s whole day', () => {
    const { clock, engine, firing } = setup();
    for (let i = 0; i < 100; i++) engine.observe(transfer({ time: T0 - i * MIN, eventCode: 5, file: `REM_${i}.REM` }));
    // Transfers older than the span are kept by the rule (its window is a day) but their ids are not remembered.
    expect(engine.rememberedTransfers).toBe(DEDUP_SPAN / MIN);
    // Times are kept to the second, so an id may stay up to a second longer.
    clock.set(T0 + DEDUP_SPAN + 1000);
    expect(firing(T0 + DEDUP_SPAN + 1000)).toEqual([]);
    expect(engine.rememberedTransfers).toBe(0);
  });

  it('forgets expired ids at most a minute of evaluations late, not at every evaluation', () => {
    const { engine, firing } = setup();
    // One kept transfer a minute, T0-29m10s .. T0-10s: each id is remembered until its transfer is DEDUP_SPAN old.
    for (let i = 0; i < 30; i++) engine.observe(transfer({ time: T0 - i * MIN - 10_000, eventCode: 5, file: `REM_${i}.REM` }));
    expect(engine.rememberedTransfers).toBe(30);
    firing(T0 + 1000); // pruned here: none expired yet (T0-29m10s's id is remembered until T0+50s)
    expect(engine.rememberedTransfers).toBe(30);
    // That id expired at T0+50s, but the next prune is due a minute after the last one, at T0+61s.
    firing(T0 + 55_000);
    expect(engine.rememberedTransfers).toBe(30);
    // Pruned again: the ids that expired by T0+3m30s (those of T0-29m10s .. T0-27m10s) are forgotten.
    firing(T0 + 3 * MIN + 30_000);
    expect(engine.rememberedTransfers).toBe(27);
  });
});
