import { afterEach, describe, expect, it, vi } from 'vitest';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { completeUntil, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const USERS = 12;

/** A burst rule per user, so that one evaluation is many rules. */
const RULES = Array.from(
  { length: USERS },
  (_, i) => `
  - name: Burst${i}
    type: error_burst
    match: { user: [BANK${i}] }
    threshold: ${(i % 3) + 1}
    window: 10m
    severity: warning`,
).join('');

function engineWithData(): RuleEngine {
  const engine = new RuleEngine(rulesFrom(`rules:${RULES}`), { clock: new ManualClock(T0), logger: silentLogger(), sources: ['prod'] });
  for (let i = 0; i < USERS; i++) {
    for (let k = 0; k < i % 4; k++) engine.observe(transfer({ id: `t${i}-${k}`, time: T0 - (k + 1) * MIN, user: `BANK${i}`, code: 21 }));
  }
  return engine;
}

describe('RuleEngine.evaluateInSlices', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('gives what evaluate gives, and lets the event loop turn between rules once a slice is spent', async () => {
    const expected = engineWithData().evaluate(T0, completeUntil(T0));
    // Every look at the clock 10 ms later: each rule spends a slice, so every gap between two rules is a turn.
    let fakeNow = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (fakeNow += 10));
    let turns = 0;
    const countTurns = (): void => {
      turns += 1;
      if (turns < 1_000) setImmediate(countTurns);
    };
    setImmediate(countTurns);
    const sliced = await engineWithData().evaluateInSlices(T0, completeUntil(T0));
    turns = 1_000; // stop counting
    expect(sliced).toEqual(expected);
    expect(expected.flatMap((e) => e.alerts).length).toBeGreaterThan(3); // some rules fire, some do not
    expect(turns).toBeGreaterThanOrEqual(USERS - 1);
  });

  it('does not yield while the slice lasts', async () => {
    vi.spyOn(performance, 'now').mockReturnValue(5);
    let turned = false;
    setImmediate(() => (turned = true));
    await engineWithData().evaluateInSlices(T0, completeUntil(T0));
    expect(turned).toBe(false);
  });

  it('reads the clock only after a rule it evaluated, not after one whose last evaluation stands', async () => {
    const engine = engineWithData();
    const first = await engine.evaluateInSlices(T0, completeUntil(T0));
    // Nothing observed since, and T0 + 1s is within every rule's steady span (its failures stay in the window).
    let reads = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (reads += 1) * 10);
    const again = await engine.evaluateInSlices(T0 + 1000, completeUntil(T0 + 1000));
    const standing = again.filter((e, i) => e === first[i]).length;
    expect(standing).toBeGreaterThan(0);
    // One look after each rule evaluated anew (the last one's excepted: nothing follows it), none after a standing one.
    const evaluated = USERS - standing;
    expect(reads).toBeLessThanOrEqual(evaluated);
    expect(again).toEqual(engineWithData().evaluate(T0 + 1000, completeUntil(T0 + 1000)));
  });
});
