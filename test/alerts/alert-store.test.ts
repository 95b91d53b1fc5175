import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertCandidate } from '../../src/alerts/alert-candidate.js';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { fingerprint } from '../../src/alerts/fingerprint.js';
import { SOURCE_DOWN_ALERTNAME } from '../../src/alerts/source-down.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import { FileStateStore } from '../../src/state/file-state-store.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from '../rules/rule-fixture.js';
import { MIN, transfer } from '../rules/transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const logger = silentLogger();

function candidate(labels: Record<string, string>, over: Partial<AlertCandidate> = {}): AlertCandidate {
  return { labels, annotations: { summary: 's' }, values: {}, samples: [], for: 0, keepFiringFor: 0, ...over };
}

const BURST = `
rules:
  - name: Burst
    type: error_burst
    group_by: [user]
    threshold: 3
    window: 10m
    for: 1m
    severity: critical
`;

describe('AlertStore persistence', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tw-alerts-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('after a restart, rebuilt windows re-fire the same alert with its identity and activeAt, and no new change', async () => {
    const failures = [0, 1, 2].map((m) => transfer({ time: T0 + m * MIN, code: 36, user: 'BANK1' }));
    const clock = new ManualClock(T0 + 3 * MIN);
    const state = new FileStateStore(dir, logger, clock);
    await state.init();
    const engine = new RuleEngine(rulesFrom(BURST), { clock, logger, sources: ['prod'] });
    const store = new AlertStore({ clock, logger, state });
    for (const f of failures) engine.observe(f);
    store.apply(engine.evaluate(T0 + 3 * MIN, { completeUntil: () => T0 + 3 * MIN }), T0 + 3 * MIN);
    clock.set(T0 + 4 * MIN);
    store.apply(engine.evaluate(T0 + 4 * MIN, { completeUntil: () => T0 + 4 * MIN }), T0 + 4 * MIN);
    const before = store.alerts();
    expect(before).toMatchObject([{ state: 'firing', activeAt: T0 + 3 * MIN, firedAt: T0 + 4 * MIN }]);
    await store.flush();
    expect(JSON.parse(await readFile(path.join(dir, 'alerts.json'), 'utf8'))).toMatchObject({ version: 1 });

    // "kill -9": a new process, new engine and store over the same directory.
    const clock2 = new ManualClock(T0 + 6 * MIN);
    const state2 = new FileStateStore(dir, logger, clock2);
    const engine2 = new RuleEngine(rulesFrom(BURST), { clock: clock2, logger, sources: ['prod'] });
    const store2 = new AlertStore({ clock: clock2, logger, state: state2 });
    await store2.restore();
    expect(engine2.historyNeeded()).toBe(10 * MIN);
    for (const f of failures) engine2.observe(f); // the daemon re-reads historyNeeded() of history
    for (const f of failures) engine2.observe(f); // and overlapping windows may hand them over again
    const changes = store2.apply(engine2.evaluate(T0 + 6 * MIN, { completeUntil: () => T0 + 6 * MIN }), T0 + 6 * MIN);
    expect(changes).toEqual([]);
    const after = store2.alerts();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ fingerprint: before[0]?.fingerprint, state: 'firing', activeAt: T0 + 3 * MIN, values: { count: 3 } });
  });

  it('a restored store ends what a rule stops reporting, keeps the rest, and drops restored resolved alerts after their retention', async () => {
    const state = new MemoryStateStore();
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state, resolvedRetention: 10 * MIN });
    const [one, two, other] = [candidate({ alertname: 'A', user: 'BANK1' }), candidate({ alertname: 'A', user: 'BANK2' }), candidate({ alertname: 'B', user: 'BANK1' })];
    store.apply([{ rule: 'A', alerts: [one, two] }, { rule: 'B', alerts: [other] }], T0);
    store.apply([{ rule: 'A', alerts: [one] }, { rule: 'B', alerts: [other] }], T0 + MIN); // BANK2 resolves at T0+1m
    await store.flush({ force: true });

    const clock = new ManualClock(T0 + 2 * MIN);
    const restored = new AlertStore({ clock, logger, state, resolvedRetention: 10 * MIN });
    await restored.restore();
    // The same alerts, reported again: nothing changes; then A stops reporting BANK1, and only that one ends.
    expect(restored.apply([{ rule: 'A', alerts: [one] }, { rule: 'B', alerts: [other] }], T0 + 2 * MIN)).toEqual([]);
    const ended = restored.apply([{ rule: 'A', alerts: [] }, { rule: 'B', alerts: [other] }], T0 + 3 * MIN);
    expect(ended.map((c) => `${c.alert.labels['alertname']}:${c.alert.labels['user']}:${c.to}`)).toEqual(['A:BANK1:resolved']);
    // BANK2's retention, from its restored resolvedAt, ends at T0+11m; BANK1's at T0+13m.
    clock.set(T0 + 11 * MIN);
    expect(restored.alerts().map((a) => `${a.labels['alertname']}:${a.labels['user']}:${a.state}`).sort()).toEqual(['A:BANK1:resolved', 'B:BANK1:firing']);
    clock.set(T0 + 13 * MIN);
    expect(restored.alerts().map((a) => `${a.labels['alertname']}:${a.state}`)).toEqual(['B:firing']);
    // Firing again after it was dropped is a new alert of rule A, ended by A's next empty evaluation.
    expect(restored.apply([{ rule: 'A', alerts: [one] }], T0 + 14 * MIN).map((c) => c.to)).toEqual(['firing']);
    expect(restored.apply([{ rule: 'A', alerts: [] }], T0 + 15 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('a restored pending alert counts `for` from its original activeAt', async () => {
    const state = new MemoryStateStore();
    const first = new AlertStore({ clock: new ManualClock(T0), logger, state });
    const c = candidate({ alertname: 'A', severity: 'warning' }, { for: 5 * MIN });
    expect(first.apply([{ rule: 'A', alerts: [c] }], T0).map((x) => x.to)).toEqual(['pending']);
    await first.flush();
    const second = new AlertStore({ clock: new ManualClock(T0 + 5 * MIN), logger, state });
    await second.restore();
    expect(second.apply([{ rule: 'A', alerts: [c] }], T0 + 5 * MIN).map((x) => [x.from, x.to])).toEqual([['pending', 'firing']]);
  });

  it('writes the snapshot when an alert changed, not at evaluations where nothing did; lastActiveAt at least every minute', async () => {
    const clock = new ManualClock(T0);
    const state = new MemoryStateStore();
    const saves: unknown[] = [];
    const save = state.save.bind(state);
    state.save = (key, value) => {
      saves.push(JSON.parse(JSON.stringify(value)));
      return save(key, value);
    };
    const store = new AlertStore({ clock, logger, state });
    // The same candidate object at every evaluation: its group did not change (alerts driven by change).
    const same = candidate({ alertname: 'Burst', user: 'BANK1' });
    const step = async (at: number, c: AlertCandidate[]) => {
      clock.set(at);
      store.apply([{ rule: 'Burst', alerts: c }], at);
      await store.flush();
    };
    await step(T0, [same]);
    expect(saves).toHaveLength(1);
    await step(T0 + 10_000, [same]);
    await step(T0 + 20_000, [same]);
    expect(saves).toHaveLength(1);
    // New figures: written at once.
    const again = { ...same, values: { count: 4 } };
    await step(T0 + 30_000, [again]);
    expect(saves).toHaveLength(2);
    // Only lastActiveAt moved: written once it is a minute old in the snapshot.
    await step(T0 + 40_000, [again]);
    await step(T0 + 80_000, [again]);
    expect(saves).toHaveLength(2);
    await step(T0 + 90_000, [again]);
    expect(saves).toHaveLength(3);
    expect(saves.at(-1)).toMatchObject({ alerts: [{ lastActiveAt: T0 + 90_000 }] });
    // Resolved: written at once; forced: written although nothing changed.
    await step(T0 + 100_000, []);
    expect(saves).toHaveLength(4);
    await store.flush({ force: true });
    expect(saves).toHaveLength(5);
  });

  it('a failed write is tried again at the next flush', async () => {
    const clock = new ManualClock(T0);
    const state = new MemoryStateStore();
    let fail = true;
    const save = state.save.bind(state);
    state.save = (key, value) => (fail ? Promise.reject(new Error('EROFS')) : save(key, value));
    const store = new AlertStore({ clock, logger, state });
    store.apply([{ rule: 'Burst', alerts: [candidate({ alertname: 'Burst', user: 'BANK1' })] }], T0);
    await expect(store.flush()).rejects.toThrow('EROFS');
    fail = false;
    await store.flush();
    expect(await state.load('alerts')).toMatchObject({ alerts: [{ labels: { user: 'BANK1' } }] });
  });

  it('an unreadable snapshot starts empty instead of crashing', async () => {
    const state = new MemoryStateStore();
    await state.save('alerts', { version: 1, alerts: [{ nonsense: true }] });
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state });
    await store.restore();
    expect(store.alerts()).toEqual([]);
  });
});

describe('AlertStore lifecycle', () => {
  it('identity is the label set; resolved alerts are kept for the retention, then dropped', () => {
    const clock = new ManualClock(T0);
    const store = new AlertStore({ clock, logger, state: new MemoryStateStore(), resolvedRetention: 10 * MIN });
    const labels = { alertname: 'A', severity: 'warning', user: 'BANK1' };
    store.apply([{ rule: 'A', alerts: [candidate(labels), candidate({ ...labels, user: 'BANK2' })] }], T0);
    expect(store.alerts().map((a) => a.fingerprint).sort()).toEqual([fingerprint(labels), fingerprint({ ...labels, user: 'BANK2' })].sort());
    const changes = store.apply([{ rule: 'A', alerts: [candidate(labels)] }], T0 + MIN);
    expect(changes.map((c) => [c.alert.labels['user'], c.to])).toEqual([['BANK2', 'resolved']]);
    clock.set(T0 + 10 * MIN);
    expect(store.alerts().map((a) => a.state).sort()).toEqual(['firing', 'resolved']);
    clock.set(T0 + 11 * MIN);
    expect(store.alerts().map((a) => a.state)).toEqual(['firing']);
    // Firing again after resolving is a new activation.
    const again = store.apply([{ rule: 'A', alerts: [candidate(labels), candidate({ ...labels, user: 'BANK2' })] }], T0 + 12 * MIN);
    expect(again.map((c) => [c.from, c.to])).toEqual([['inactive', 'firing']]);
  });

  it('a resolution with final words uses them; alerts of other rules are untouched', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    const a = candidate({ alertname: 'Missing', severity: 'warning' });
    const b = candidate({ alertname: 'Other', severity: 'warning' });
    store.apply([{ rule: 'Missing', alerts: [a] }, { rule: 'Other', alerts: [b] }], T0);
    const changes = store.apply([{ rule: 'Missing', alerts: [], resolved: [{ ...a, annotations: { summary: 'arrived late' } }] }], T0 + MIN);
    expect(changes.map((c) => [c.alert.labels['alertname'], c.to, c.alert.annotations['summary']])).toEqual([['Missing', 'resolved', 'arrived late']]);
    expect(store.alerts().find((x) => x.labels['alertname'] === 'Other')?.state).toBe('firing');
  });

  it('retainRules resolves the alerts of rules that were removed', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    store.apply([{ rule: 'Gone', alerts: [candidate({ alertname: 'Gone', severity: 'warning' })] }], T0);
    store.setSourceDown('prod', true, T0);
    expect(store.retainRules(['Kept'], T0 + MIN).map((c) => [c.alert.labels['alertname'], c.to])).toEqual([['Gone', 'resolved']]);
    expect(store.alerts().find((x) => x.labels['alertname'] === SOURCE_DOWN_ALERTNAME)?.state).toBe('firing');
  });
});

describe('TransferWatchSourceDown', () => {
  it('fires critical per source, keeps its activeAt while down, resolves when the source is back', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    const fired = store.setSourceDown('prod', true, T0, 'no successful poll since 2026-11-20 09:55:00 UTC');
    expect(fired.map((c) => c.to)).toEqual(['firing']);
    expect(fired[0]?.alert.labels).toEqual({ alertname: 'TransferWatchSourceDown', severity: 'critical', source: 'prod' });
    expect(fired[0]?.alert.annotations['description']).toBe('no successful poll since 2026-11-20 09:55:00 UTC');
    expect(store.setSourceDown('prod', true, T0 + MIN)).toEqual([]);
    expect(store.apply([], T0 + MIN)).toEqual([]); // rule evaluations never resolve it
    expect(store.setSourceDown('dr', false, T0 + MIN)).toEqual([]);
    const back = store.setSourceDown('prod', false, T0 + 2 * MIN);
    expect(back.map((c) => [c.from, c.to])).toEqual([['firing', 'resolved']]);
    expect(store.alerts()[0]).toMatchObject({ activeAt: T0, resolvedAt: T0 + 2 * MIN });
  });
});

describe('AlertStore.apply across rules', () => {
  it('resolves only the alerts of the rule whose evaluation no longer has them, and sees a rule listed twice', () => {
    const clock = new ManualClock(T0);
    const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
    const a = candidate({ alertname: 'A', user: 'BANK1' });
    const b = candidate({ alertname: 'B', user: 'BANK1' });
    store.apply([{ rule: 'A', alerts: [a] }, { rule: 'B', alerts: [b] }], T0);
    expect(store.alerts().map((x) => `${x.labels['alertname']}:${x.state}`).sort()).toEqual(['A:firing', 'B:firing']);

    // A's evaluation is empty: only A resolves; B stays firing though its evaluation comes after.
    const changes = store.apply([{ rule: 'A', alerts: [] }, { rule: 'B', alerts: [b] }], T0 + 60_000);
    expect(changes.map((c) => `${c.alert.labels['alertname']}:${c.from}->${c.to}`)).toEqual(['A:firing->resolved']);

    // The same rule twice in one apply: the second list ends what the first one started.
    const c = candidate({ alertname: 'C', user: 'BANK2' });
    const twice = store.apply([{ rule: 'C', alerts: [c] }, { rule: 'C', alerts: [] }], T0 + 120_000);
    expect(twice.map((x) => `${x.alert.labels['alertname']}:${x.from}->${x.to}`)).toEqual(['C:inactive->firing', 'C:firing->resolved']);
  });
});

describe('AlertStore keep_firing_for', () => {
  it('says an alert is held (until when, cleared since when) while keep_firing_for keeps it firing, and no more once it resolves or its condition is back', () => {
    const clock = new ManualClock(T0);
    const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
    const c = candidate({ alertname: 'Burst', user: 'BANK1' }, { keepFiringFor: 5 * MIN });
    store.apply([{ rule: 'Burst', alerts: [c] }], T0);
    expect(store.alerts()[0]?.held).toBeUndefined();
    clock.set(T0 + MIN);
    store.apply([{ rule: 'Burst', alerts: [] }], T0 + MIN);
    expect(store.alerts()[0]).toMatchObject({ state: 'firing', held: { until: T0 + 5 * MIN, clearedAt: T0, keepFiringFor: 5 * MIN } });
    clock.set(T0 + 2 * MIN);
    store.apply([{ rule: 'Burst', alerts: [c] }], T0 + 2 * MIN);
    expect(store.alerts()[0]?.held).toBeUndefined();
    clock.set(T0 + 8 * MIN);
    store.apply([{ rule: 'Burst', alerts: [] }], T0 + 8 * MIN);
    expect(store.alerts()[0]).toMatchObject({ state: 'resolved' });
    expect(store.alerts()[0]?.held).toBeUndefined();
  });
});

describe('AlertStore, the same evaluation applied again (a rule that observed nothing)', () => {
  const labels = { alertname: 'A', severity: 'warning', user: 'BANK1' };

  it('keeps its alerts active as of now: keep_firing_for counts from the last time it was applied', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    const ev = { rule: 'A', alerts: [candidate(labels, { keepFiringFor: 5 * MIN })] };
    store.apply([ev], T0);
    expect(store.apply([ev], T0 + 10 * MIN)).toEqual([]);
    // Cleared at T0+11m: held until T0+15m (last active T0+10m), not resolved at once (T0+5m is past).
    expect(store.apply([{ rule: 'A', alerts: [] }], T0 + 11 * MIN)).toEqual([]);
    expect(store.alerts()[0]?.held).toMatchObject({ until: T0 + 15 * MIN });
    expect(store.apply([{ rule: 'A', alerts: [] }], T0 + 15 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('applied again and again, its alerts stay active as of the last time: for keep_firing_for, and in the snapshot', async () => {
    const state = new MemoryStateStore();
    const store = new AlertStore({ clock: new ManualClock(T0 + 20 * MIN), logger, state });
    const ev = { rule: 'A', alerts: [candidate(labels, { keepFiringFor: 5 * MIN })] };
    store.apply([ev], T0);
    for (let m = 1; m <= 10; m++) expect(store.apply([ev], T0 + m * MIN)).toEqual([]);
    await store.flush({ force: true });
    expect(((await state.load('alerts')) as { alerts: Array<{ lastActiveAt: number }> }).alerts.map((a) => a.lastActiveAt)).toEqual([T0 + 10 * MIN]);
    expect(store.apply([ev], T0 + 12 * MIN)).toEqual([]);
    // Cleared at T0+13m: held until T0+17m (last active T0+12m).
    expect(store.apply([{ rule: 'A', alerts: [] }], T0 + 13 * MIN)).toEqual([]);
    expect(store.alerts()[0]?.held).toMatchObject({ until: T0 + 17 * MIN });
  });

  it('an alert another rule reports meanwhile (same labels) is that rule’s, and the first rule’s next apply takes it back', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    const ev = { rule: 'A', alerts: [candidate(labels)] };
    store.apply([ev], T0);
    store.apply([ev], T0 + MIN);
    store.apply([ev], T0 + 2 * MIN);
    store.apply([{ rule: 'B', alerts: [candidate(labels)] }], T0 + 3 * MIN);
    // A reports it again with no B evaluation in between: it is A's again, firing, and B no longer holds it.
    expect(store.apply([ev], T0 + 4 * MIN)).toEqual([]);
    expect(store.apply([{ rule: 'B', alerts: [] }], T0 + 5 * MIN)).toEqual([]);
    expect(store.alerts().map((a) => a.state)).toEqual(['firing']);
  });

  it('still turns a pending alert firing once `for` has passed, and fires again an alert resolved meanwhile', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    const ev = { rule: 'A', alerts: [candidate(labels, { for: 2 * MIN })] };
    expect(store.apply([ev], T0).map((c) => c.to)).toEqual(['pending']);
    expect(store.apply([ev], T0 + MIN)).toEqual([]);
    expect(store.apply([ev], T0 + 2 * MIN).map((c) => `${c.from}->${c.to}`)).toEqual(['pending->firing']);
    expect(store.retainRules([], T0 + 3 * MIN).map((c) => c.to)).toEqual(['resolved']);
    expect(store.apply([ev], T0 + 4 * MIN).map((c) => `${c.from}->${c.to}`)).toEqual(['resolved->pending']);
  });

  it('after a restore, gives the restored alerts the evaluation’s figures again', async () => {
    const state = new MemoryStateStore();
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state });
    const ev = { rule: 'A', alerts: [candidate(labels, { values: { count: 3 } })] };
    store.apply([ev], T0);
    // Another replica saved the same alert with other figures; this one restores them, then applies its evaluation.
    const other = new AlertStore({ clock: new ManualClock(T0), logger, state });
    other.apply([{ rule: 'A', alerts: [candidate(labels, { values: { count: 9 } })] }], T0);
    await other.flush({ force: true });
    await store.restore({ quiet: true });
    expect(store.alerts()[0]?.values).toEqual({ count: 9 });
    store.apply([ev], T0 + MIN);
    expect(store.alerts()[0]?.values).toEqual({ count: 3 });
  });

  it('finds each rule’s last evaluation whatever the order of the list it comes in', () => {
    const store = new AlertStore({ clock: new ManualClock(T0), logger, state: new MemoryStateStore() });
    const a = { rule: 'A', alerts: [candidate({ ...labels, alertname: 'A' })] };
    const b = { rule: 'B', alerts: [candidate({ ...labels, alertname: 'B' })] };
    expect(store.apply([a, b], T0).map((c) => c.to)).toEqual(['firing', 'firing']);
    expect(store.apply([a, b], T0 + MIN)).toEqual([]);
    // The same evaluations in the other order: both still stand; then B reports nothing, wherever it comes.
    expect(store.apply([b, a], T0 + 2 * MIN)).toEqual([]);
    expect(store.apply([{ rule: 'B', alerts: [] }, a], T0 + 3 * MIN).map((c) => `${c.alert.labels['alertname']}:${c.to}`)).toEqual(['B:resolved']);
    expect(store.apply([a, b], T0 + 4 * MIN).map((c) => `${c.alert.labels['alertname']}:${c.to}`)).toEqual(['B:firing']);
    expect(store.alerts().map((x) => `${x.labels['alertname']}:${x.state}:${x.activeAt - T0}`).sort()).toEqual(['A:firing:0', `B:firing:${4 * MIN}`]);
  });
});
