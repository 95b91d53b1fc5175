import { describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { ErrorBurstEvaluator } from '../../src/rules/error-burst.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { completeUntil, MIN, transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');

function setup(ruleYaml: string) {
  const clock = new ManualClock(T0);
  const logger = silentLogger();
  const engine = new RuleEngine(rulesFrom(ruleYaml), { clock, logger, sources: ['prod'] });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  const step = (at: number) => {
    clock.set(at);
    return store.apply(engine.evaluate(at, completeUntil(at)), at);
  };
  return { clock, engine, store, step };
}

const BURST = `
rules:
  - name: Burst
    type: error_burst
    match: { event: [reception] }
    group_by: [mft_instance, user]
    threshold: 3
    window: 10m
    severity: critical
    annotations: { summary: "{{count}} failed for {{labels.user}} in {{window}}" }
`;

describe('error_burst', () => {
  it('fires at the threshold, per group, with count, window and the most recent samples', () => {
    const { engine, store, step } = setup(BURST);
    for (let i = 0; i < 2; i++) engine.observe(transfer({ time: T0 + i * MIN, code: 36, user: 'BANK1' }));
    for (let i = 0; i < 2; i++) engine.observe(transfer({ time: T0 + i * MIN, code: 36, user: 'BANK2' }));
    engine.observe(transfer({ time: T0 + MIN, code: 0, user: 'BANK1' })); // a success does not count
    expect(step(T0 + 2 * MIN)).toEqual([]);
    engine.observe(transfer({ time: T0 + 2 * MIN, code: 12, user: 'BANK1', file: 'LAST.RET', message: 'timeout' }));
    const changes = step(T0 + 3 * MIN);
    expect(changes.map((c) => [c.from, c.to])).toEqual([['inactive', 'firing']]);
    const [alert] = store.alerts();
    expect(alert?.labels).toEqual({ alertname: 'Burst', severity: 'critical', mft_instance: 'PROD01', user: 'BANK1' });
    expect(alert?.annotations['summary']).toBe('3 failed for BANK1 in 10m');
    expect(alert?.values['count']).toBe(3);
    expect(alert?.samples).toHaveLength(3);
    expect(alert?.samples[0]).toMatchObject({ file: 'LAST.RET', code: 12, message: 'timeout' });
  });

  it('a resolved burst carries the figures at resolution, not the last firing count', () => {
    const { engine, store, step } = setup(BURST);
    for (const m of [0, 1, 2, 3]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    step(T0 + 4 * MIN);
    expect(store.alerts()[0]).toMatchObject({ state: 'firing', values: { count: 4 } });
    // At T0+11.5m the failures at T0 and T0+1m have left the window: 2 of them remain, below the threshold.
    step(T0 + 11.5 * MIN);
    const [alert] = store.alerts();
    expect(alert?.state).toBe('resolved');
    expect(alert?.values['count']).toBe(2);
    expect(alert?.annotations['summary']).toBe('2 failed for BANK1 in 10m');
    expect(alert?.samples).toHaveLength(2);
  });

  it('slides by occurrence time: failures leave the window and the alert resolves', () => {
    const { engine, store, step } = setup(BURST);
    for (const m of [0, 4, 8]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    step(T0 + 9 * MIN);
    expect(store.alerts().map((a) => a.state)).toEqual(['firing']);
    // At T0+10m the failure at T0 is exactly one window old: (now - window, now] excludes it.
    const changes = step(T0 + 10 * MIN);
    expect(changes.map((c) => c.to)).toEqual(['resolved']);
  });

  it('counts records that arrive out of order and ignores a transfer seen twice', () => {
    const { engine, store, step } = setup(BURST);
    const dup = transfer({ time: T0 + 5 * MIN, code: 36 });
    engine.observe(dup);
    engine.observe(dup);
    engine.observe(transfer({ time: T0 + 7 * MIN, code: 36 }));
    step(T0 + 8 * MIN);
    expect(store.alerts()).toEqual([]);
    engine.observe(transfer({ time: T0 + 1 * MIN, code: 36 })); // a late page
    step(T0 + 9 * MIN);
    expect(store.alerts()[0]?.values['count']).toBe(3);
  });

  it('stays pending for `for`, then fires; a pending alert whose condition clears disappears silently', () => {
    const { engine, store, step } = setup(BURST.replace('severity: critical', 'severity: critical\n    for: 2m'));
    for (const m of [0, 1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    expect(step(T0 + 3 * MIN).map((c) => c.to)).toEqual(['pending']);
    expect(step(T0 + 4 * MIN)).toEqual([]);
    expect(step(T0 + 5 * MIN).map((c) => c.to)).toEqual(['firing']);
    expect(store.alerts()[0]).toMatchObject({ state: 'firing', activeAt: T0 + 3 * MIN, firedAt: T0 + 5 * MIN });

    const other = setup(BURST.replace('severity: critical', 'severity: critical\n    for: 5m'));
    for (const m of [0, 1, 2]) other.engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    other.step(T0 + 3 * MIN);
    expect(other.step(T0 + 10 * MIN).map((c) => [c.from, c.to])).toEqual([['pending', 'inactive']]);
    expect(other.store.alerts()).toEqual([]);
  });

  it('keep_firing_for bridges a lull instead of flapping', () => {
    const { engine, store, step } = setup(BURST.replace('severity: critical', 'severity: critical\n    keep_firing_for: 5m'));
    for (const m of [0, 1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    for (let m = 3; m <= 9; m++) step(T0 + m * MIN); // active through T0+9m
    expect(step(T0 + 10 * MIN)).toEqual([]); // T0 left the window: condition false, kept firing
    expect(store.alerts()[0]?.state).toBe('firing');
    // The burst comes back inside keep_firing_for: same alert, same activeAt, no change to notify.
    engine.observe(transfer({ time: T0 + 10.5 * MIN, code: 36 }));
    engine.observe(transfer({ time: T0 + 11 * MIN, code: 36 }));
    expect(step(T0 + 11 * MIN)).toEqual([]);
    expect(store.alerts()[0]).toMatchObject({ state: 'firing', activeAt: T0 + 3 * MIN });
    // From T0+12m the condition is false again; last active at T0+11m, so it resolves at T0+16m, not before.
    for (let m = 12; m <= 15; m++) expect(step(T0 + m * MIN)).toEqual([]);
    expect(step(T0 + 16 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('keeps memory bounded: old failures are pruned and too-old records are not remembered', () => {
    const { engine, step } = setup(BURST);
    for (let i = 0; i < 100; i++) engine.observe(transfer({ time: T0 + i * 1000, code: 36 }));
    for (let i = 0; i < 50; i++) engine.observe(transfer({ time: T0 + i * 1000, code: 0 })); // successes: not kept
    expect(engine.rememberedTransfers).toBe(100);
    step(T0 + 2 * 60 * MIN);
    expect(engine.rememberedTransfers).toBe(0);
    const before = engine.matchChecks;
    engine.observe(transfer({ time: T0, code: 36 })); // far older than any window at the clock's time
    expect(engine.matchChecks).toBe(before);
    expect(engine.historyNeeded()).toBe(10 * MIN);
  });
});

describe('error_burst between evaluations', () => {
  it('a firing group nothing was added to keeps its alert, unless a template prints the window’s bounds', () => {
    const withBounds = BURST.replace('annotations: {', 'annotations: { description: "from {{window_start}} to {{window_end}}",').replace('name: Burst', 'name: Bounds');
    const { engine, store, step } = setup(`${BURST}\n${withBounds.replace('rules:', '')}`);
    for (let i = 0; i < 3; i++) engine.observe(transfer({ time: T0 + i * MIN, code: 36, user: 'BANK1' }));
    step(T0 + 3 * MIN);
    const at = (name: string) => store.alerts().find((a) => a.labels['alertname'] === name)?.annotations['description'];
    const steadyBefore = at('Burst');
    const boundsBefore = at('Bounds');
    step(T0 + 4 * MIN);
    expect(at('Burst')).toBe(steadyBefore);
    expect(at('Bounds')).not.toBe(boundsBefore);
    expect(at('Bounds')).toContain('10:04');
  });
});

describe('error_burst against a brute-force count', () => {
  it('for any arrival order, fires exactly when a group has >= threshold failures in (now - window, now]', async () => {
    const fc = await import('fast-check');
    fc.assert(
      fc.property(
        fc.array(fc.record({ minute: fc.integer({ min: 0, max: 30 }), user: fc.constantFrom('BANK1', 'BANK2'), failed: fc.boolean() }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 40 }),
        (events, evalMinute) => {
          const { engine, store, step } = setup(BURST);
          const transfers = events.map((e) => transfer({ time: T0 + e.minute * MIN, user: e.user, code: e.failed ? 36 : 0 }));
          for (const t of transfers) engine.observe(t);
          const now = T0 + evalMinute * MIN;
          step(now);
          const expected = ['BANK1', 'BANK2'].filter(
            (u) => transfers.filter((t) => t.user === u && t.code !== 0 && t.time > now - 10 * MIN && t.time <= now).length >= 3,
          );
          expect(store.alerts().map((a) => a.labels['user']).sort()).toEqual(expected);
        },
      ),
      { numRuns: 150, seed: 42 },
    );
  });
  it('at every evaluation of a sequence, fires exactly the groups with >= threshold failures (quiet groups are skipped, not missed)', async () => {
    const fc = await import('fast-check');
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            // Observed before the evaluation at `step`; stamped up to 5 minutes after it (clock skew).
            step: fc.integer({ min: 0, max: 24 }),
            ahead: fc.integer({ min: -12, max: 5 }),
            user: fc.constantFrom('BANK1', 'BANK2', 'BANK3'),
          }),
          { maxLength: 40 },
        ),
        (events) => {
          const { engine, store, step } = setup(BURST);
          const seen: { time: number; user: string }[] = [];
          // A minute apart, so most evaluations are not the rule's periodic visit of every group.
          for (let k = 0; k <= 24; k++) {
            const now = T0 + k * MIN;
            for (const e of events.filter((x) => x.step === k)) {
              const t = transfer({ time: now + e.ahead * MIN, user: e.user, code: 36 });
              engine.observe(t);
              seen.push({ time: t.time, user: e.user });
            }
            step(now);
            const expected = ['BANK1', 'BANK2', 'BANK3'].filter(
              (u) => seen.filter((t) => t.user === u && t.time > now - 10 * MIN && t.time <= now).length >= 3,
            );
            const firing = store.alerts().filter((a) => a.state === 'firing');
            expect(firing.map((a) => a.labels['user']).sort(), `evaluation ${k}`).toEqual(expected);
            // Samples: the latest 5 failures of the window up to now, newest first, late arrivals included.
            for (const alert of firing) {
              const latest = seen
                .filter((t) => t.user === alert.labels['user'] && t.time > now - 10 * MIN && t.time <= now)
                .map((t) => t.time)
                .sort((a, b) => b - a)
                .slice(0, 5);
              expect(alert.samples.map((x) => x.time), `samples at evaluation ${k}`).toEqual(latest);
              // The count too: a firing group nothing was added to keeps its alert only until a failure expires.
              const count = seen.filter((t) => t.user === alert.labels['user'] && t.time > now - 10 * MIN && t.time <= now).length;
              expect(alert.values['count'], `count at evaluation ${k}`).toBe(count);
            }
          }
        },
      ),
      { numRuns: 150, seed: 7 },
    );
  });

  it('drops the expired failures of a group that went quiet below the threshold', () => {
    const [rule] = rulesFrom(BURST);
    if (rule?.type !== 'error_burst') throw new Error('fixture is not an error_burst rule');
    const evaluator = new ErrorBurstEvaluator({ ...rule, timezone: rule.timezone ?? 'UTC' });
    evaluator.observe(transfer({ time: T0, code: 36, user: 'BANK1' }));
    evaluator.evaluate(T0 + MIN);
    // Another group keeps the rule busy; BANK1's lone failure leaves the 10m window at T0+10m and must be
    // dropped within a quarter window after that, although BANK1's group is never observed again.
    for (let m = 2; m <= 13; m++) {
      evaluator.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK2' }));
      evaluator.evaluate(T0 + m * MIN);
    }
    expect(evaluator.heldFailures).toBe(10); // BANK2's failures at T0+4m..T0+13m
  });

  it('lets go of the groups of a burst once it is over: none is visited, counted as firing or kept', () => {
    const [rule] = rulesFrom(BURST);
    if (rule?.type !== 'error_burst') throw new Error('fixture is not an error_burst rule');
    const evaluator = new ErrorBurstEvaluator({ ...rule, timezone: rule.timezone ?? 'UTC' });
    for (let u = 0; u < 50; u++) for (const m of [0, 1, 2]) evaluator.observe(transfer({ time: T0 + m * MIN, code: 36, user: `U${u}` }));
    expect(evaluator.evaluate(T0 + 3 * MIN).alerts).toHaveLength(50);
    expect(evaluator.trackedGroups).toEqual({ groups: 50, toVisit: 50, above: 50 });
    // The failures leave the window from T0+10m (the alerts clear), and are dropped at the next evaluations.
    for (let m = 4; m <= 16; m++) evaluator.evaluate(T0 + m * MIN);
    expect(evaluator.trackedGroups).toEqual({ groups: 0, toVisit: 0, above: 0 });
  });

  it('visits only the groups that can fire: one that holds fewer failures than the threshold waits for the sweep', () => {
    const [rule] = rulesFrom(BURST);
    if (rule?.type !== 'error_burst') throw new Error('fixture is not an error_burst rule');
    const evaluator = new ErrorBurstEvaluator({ ...rule, timezone: rule.timezone ?? 'UTC' });
    for (let u = 0; u < 100; u++) evaluator.observe(transfer({ time: T0, code: 36, user: `U${u}` }));
    for (const m of [0, 1, 2]) evaluator.observe(transfer({ time: T0 + m * MIN, code: 36, user: 'BANK1' }));
    // Only BANK1 reached the threshold (3): the first evaluation visits it alone, and it fires.
    expect(evaluator.trackedGroups).toEqual({ groups: 101, toVisit: 1, above: 0 });
    expect(evaluator.evaluate(T0 + 3 * MIN).alerts.map((a) => a.labels['user'])).toEqual(['BANK1']);
    // A cold group that reaches the threshold is visited again, and fires with every failure it holds.
    evaluator.observe(transfer({ time: T0 + 4 * MIN, code: 36, user: 'U7' }));
    expect(evaluator.trackedGroups.toVisit).toBe(1); // BANK1, firing
    evaluator.observe(transfer({ time: T0 + 5 * MIN, code: 36, user: 'U7' }));
    const fired = evaluator.evaluate(T0 + 5 * MIN).alerts;
    expect(fired.map((a) => [a.labels['user'], a.values['count']])).toEqual([
      ['BANK1', 3],
      ['U7', 3],
    ]);
    // Every failure leaves the 10m window by T0+15m; the sweeps (a quarter window apart) let go of all 101 groups.
    for (let m = 6; m <= 20; m++) evaluator.evaluate(T0 + m * MIN);
    expect(evaluator.trackedGroups).toEqual({ groups: 0, toVisit: 0, above: 0 });
    expect(evaluator.heldFailures).toBe(0);
  });

  it('a cleared group held by keep_firing_for tells the figures of the window it resolves in', () => {
    const { engine, store, step } = setup(BURST.replace('severity: critical', 'severity: critical\n    keep_firing_for: 5m'));
    for (const m of [0, 1, 2]) engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    step(T0 + 9 * MIN);
    expect(step(T0 + 10 * MIN)).toEqual([]); // T0 left the window: 2 failures, held firing until T0+14m
    expect(store.alerts()[0]).toMatchObject({ state: 'firing', values: { count: 2 } });
    engine.observe(transfer({ time: T0 + 10.5 * MIN, code: 36 }));
    engine.observe(transfer({ time: T0 + 11 * MIN, code: 36 }));
    // (T0+2m, T0+12m]: the failures at 10.5 and 11 minutes, still below the threshold.
    expect(step(T0 + 12 * MIN)).toEqual([]);
    expect(store.alerts()[0]).toMatchObject({ state: 'firing', values: { count: 2 } });
    // At its resolution the window (T0+4m, T0+14m] holds those two: its message says 2, and says it of that window.
    const [resolved] = step(T0 + 14 * MIN);
    expect([resolved?.to, resolved?.alert.values['count']]).toEqual(['resolved', 2]);
    // A held group whose failures all left the window says 0, and a failure after its resolution starts afresh.
    const again = setup(BURST.replace('severity: critical', 'severity: critical\n    keep_firing_for: 15m'));
    for (const m of [0, 1, 2]) again.engine.observe(transfer({ time: T0 + m * MIN, code: 36 }));
    again.step(T0 + 2 * MIN);
    again.step(T0 + 10 * MIN);
    again.step(T0 + 13 * MIN); // every failure left the window: still held (until T0+17m)
    expect(again.store.alerts()[0]).toMatchObject({ state: 'firing', values: { count: 0 } });
    again.engine.observe(transfer({ time: T0 + 15 * MIN, code: 36 }));
    const [end] = again.step(T0 + 17 * MIN);
    expect([end?.to, end?.alert.values['count']]).toEqual(['resolved', 1]);
  });

  it('in a failure storm keeps counts, and samples only of the failures a message can show', () => {
    const [rule] = rulesFrom(BURST);
    if (rule?.type !== 'error_burst') throw new Error('fixture is not an error_burst rule');
    const evaluator = new ErrorBurstEvaluator({ ...rule, timezone: rule.timezone ?? 'UTC' });
    // 6,000 failures in 6 minutes, some a minute late.
    for (let i = 0; i < 6_000; i++) evaluator.observe(transfer({ time: T0 + i * 60 - (i % 10 === 1 ? MIN : 0), code: 36, user: 'BANK1', file: `F${i}.RET` }));
    const [alert] = evaluator.evaluate(T0 + 6 * MIN).alerts;
    expect(alert?.values['count']).toBe(6_000);
    expect(alert?.samples.map((x) => x.file)).toEqual(['F5999.RET', 'F5998.RET', 'F5997.RET', 'F5996.RET', 'F5995.RET']);
    expect(evaluator.heldFailures).toBe(6_000);
    expect(evaluator.heldSamples).toBe(5);
  });
});
