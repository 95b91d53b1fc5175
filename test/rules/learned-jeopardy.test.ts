import { describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import type { DataCompleteness, UsualArrival } from '../../src/rules/rule-evaluator.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { UsualArrivals } from '../../src/sla/usual-arrivals.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { MIN, transfer } from './transfer-fixture.js';

/** `warn_before: auto` (contract section 13): the warning comes at each key's usual arrival, learned from the ledger. */

const RULE = `
rules:
  - name: StatementMissing
    type: missing_file
    match: { event: [reception], file: ["EXTRATO_*.RET"] }
    deadline: "0 10 * * 1-5"
    timezone: America/Sao_Paulo
    window: 8h
    warn_before: auto
    calendar: { exclude_weekdays: [sat, sun] }
    for_each: { label: user, values: [BANK1, BANK2] }
`;
// Monday 2026-11-23, 10:00 in Sao Paulo (UTC-3).
const MIDNIGHT = Date.parse('2026-11-23T03:00:00Z');
const DEADLINE = Date.parse('2026-11-23T13:00:00Z');

function setup(usual: (key: string) => UsualArrival | undefined) {
  const clock = new ManualClock(MIDNIGHT);
  const logger = silentLogger();
  const engine = new RuleEngine(rulesFrom(RULE), { clock, logger, sources: ['prod'], usualArrival: (_rule, key) => usual(key) });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  const step = (at: number) => {
    clock.set(at);
    const data: DataCompleteness = { completeUntil: () => at, completeFrom: () => MIDNIGHT };
    return store.apply(engine.evaluate(at, data), at);
  };
  return { engine, store, step };
}

describe('learned jeopardy', () => {
  it('warns each key at its own usual arrival, saying what it learned, and not at all for a key with too little history', () => {
    // BANK1 arrived by 08:00 on 28 of its last 30 business days and by 08:30 on all (p95: 08:30, 90 min before the
    // deadline); BANK2 has 4 judged.
    const usual = new UsualArrivals();
    const at = (hhmm: string): number => Date.parse(`2026-10-01T${hhmm}:00-03:00`);
    usual.learn('StatementMissing', [
      ...Array.from({ length: 30 }, (_, i) => ({ keyText: 'user=BANK1', deadline: at('10:00') - i * 86_400_000, arrivedAt: at(i < 2 ? '08:30' : '08:00') - i * 86_400_000 })),
      ...Array.from({ length: 4 }, (_, i) => ({ keyText: 'user=BANK2', deadline: at('10:00') - i * 86_400_000, arrivedAt: at('07:00') - i * 86_400_000 })),
    ]);
    expect(usual.get('StatementMissing', 'user=BANK1')).toEqual({ p95OffsetMs: -90 * MIN, judged: 30 });

    const { engine, store, step } = setup((key) => usual.get('StatementMissing', key));
    expect(step(DEADLINE - 91 * MIN)).toEqual([]);
    expect(step(DEADLINE - 90 * MIN).map((c) => [c.alert.labels['user'], c.alert.labels['phase'], c.to])).toEqual([['BANK1', 'jeopardy', 'firing']]);
    expect(store.alerts()[0]?.annotations['summary']).toBe(
      'StatementMissing: usually here by 2026-11-23 08:30:00 -03:00 (America/Sao_Paulo) — 95 % of the last 30 business days; not yet (deadline 2026-11-23 10:00:00 -03:00 (America/Sao_Paulo))',
    );
    // BANK2 never warns, and the expected files say why.
    expect(step(DEADLINE - 2 * MIN)).toEqual([]);
    const expected = engine.expectations(DEADLINE - 2 * MIN, { completeUntil: () => DEADLINE - 2 * MIN, completeFrom: () => MIDNIGHT });
    expect(expected.map((e) => [e.key?.value, e.status, e.learnedWarning])).toEqual([
      ['BANK1', 'in_jeopardy', { at: DEADLINE - 90 * MIN, judged: 30 }],
      ['BANK2', 'not_due', { why: 'no learned warning yet: 4 judged occurrences in the ledger, 10 needed' }],
    ]);
    // BANK1's file comes: the warning ends.
    engine.observe(transfer({ time: DEADLINE - MIN, user: 'BANK1' }));
    expect(step(DEADLINE - MIN / 2).map((c) => [c.alert.labels['user'], c.to])).toEqual([['BANK1', 'resolved']]);
  });

  it('a key whose file is often missing or late warns a minute before the deadline, not after it', () => {
    const { step } = setup(() => ({ p95OffsetMs: Infinity, judged: 30 }));
    expect(step(DEADLINE - 2 * MIN)).toEqual([]);
    expect(step(DEADLINE - MIN).map((c) => c.alert.labels['phase'])).toEqual(['jeopardy', 'jeopardy']);
  });
});
