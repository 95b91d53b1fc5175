import { describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import type { DataCompleteness } from '../../src/rules/rule-evaluator.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import type { OccurrenceRecord } from '../../src/sla/occurrence.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { rulesFrom } from './rule-fixture.js';
import { HOUR, MIN, transfer } from './transfer-fixture.js';

function rule(extra: string, deadline = '0 8 * * 1-5', timezone = 'America/Sao_Paulo'): string {
  return `
rules:
  - name: StatementMissing
    type: missing_file
    match: { event: [reception], file: ["EXTRATO_*.RET"] }
    deadline: "${deadline}"
    timezone: ${timezone}
    window: 8h
    severity: warning
${extra}`;
}

function setup(ruleYaml: string, start: number, sources = ['prod']) {
  const clock = new ManualClock(start);
  const logger = silentLogger();
  const engine = new RuleEngine(rulesFrom(ruleYaml), { clock, logger, sources });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  /** Data read from `start` up to `until` (default: `at`). */
  const step = (at: number, until: number = at) => {
    clock.set(at);
    const data: DataCompleteness = { completeUntil: () => until, completeFrom: () => start };
    return store.apply(engine.evaluate(at, data), at);
  };
  return { clock, engine, store, step };
}

// Monday 2026-11-23, 08:00 in Sao Paulo (UTC-3) is 11:00 UTC.
const MONDAY_MIDNIGHT = Date.parse('2026-11-23T03:00:00Z');
const MONDAY_DEADLINE = Date.parse('2026-11-23T11:00:00Z');

describe('missing_file', () => {
  it('fires at the deadline when nothing arrived in the window, naming the deadline with its zone', () => {
    const { store, step } = setup(rule(''), MONDAY_MIDNIGHT);
    expect(step(MONDAY_DEADLINE - MIN)).toEqual([]);
    const changes = step(MONDAY_DEADLINE);
    expect(changes.map((c) => c.to)).toEqual(['firing']);
    const alert = store.alerts()[0];
    expect(alert?.labels).toEqual({ alertname: 'StatementMissing', severity: 'warning', source: 'prod' });
    expect(alert?.annotations['summary']).toContain('2026-11-23 08:00:00 -03:00 (America/Sao_Paulo)');
    expect(alert?.values).toMatchObject({ count: 0, min_count: 1, deadline_ms: MONDAY_DEADLINE });
  });

  it('does not fire when the file arrived inside (deadline - window, deadline]', () => {
    const { engine, store, step } = setup(rule(''), MONDAY_MIDNIGHT);
    engine.observe(transfer({ time: MONDAY_DEADLINE - 7 * HOUR }));
    engine.observe(transfer({ time: MONDAY_DEADLINE - 8 * HOUR, id: 'at-window-start' })); // excluded bound: not counted, harmless
    step(MONDAY_DEADLINE + MIN);
    expect(store.alerts()).toEqual([]);
  });

  it('a failed or non-matching transfer is not an arrival', () => {
    const { engine, store, step } = setup(rule(''), MONDAY_MIDNIGHT);
    engine.observe(transfer({ time: MONDAY_DEADLINE - HOUR, code: 36 }));
    engine.observe(transfer({ time: MONDAY_DEADLINE - HOUR, file: 'OTHER.RET' }));
    engine.observe(transfer({ time: MONDAY_DEADLINE - HOUR, eventCode: 5 }));
    step(MONDAY_DEADLINE);
    expect(store.alerts().map((a) => a.state)).toEqual(['firing']);
  });

  it('waits while the data is incomplete (source outage) and decides once the poller has read past the deadline', () => {
    const { engine, store, step } = setup(rule(''), MONDAY_MIDNIGHT);
    expect(step(MONDAY_DEADLINE + 2 * HOUR, MONDAY_DEADLINE - HOUR)).toEqual([]);
    expect(store.alerts()).toEqual([]);
    // Never polled at all: also no claim.
    const never = setup(rule(''), MONDAY_MIDNIGHT);
    never.clock.set(MONDAY_DEADLINE + HOUR);
    expect(never.store.apply(never.engine.evaluate(MONDAY_DEADLINE + HOUR, { completeUntil: () => undefined }), MONDAY_DEADLINE + HOUR)).toEqual([]);
    // The outage ends and the backlog shows the file did arrive in time: still no alert.
    engine.observe(transfer({ time: MONDAY_DEADLINE - 30 * MIN }));
    step(MONDAY_DEADLINE + 3 * HOUR);
    expect(store.alerts()).toEqual([]);
  });

  it('does not judge a window that began before the data does (first start with a short look-back)', () => {
    const { store, step } = setup(rule(''), MONDAY_DEADLINE - HOUR);
    step(MONDAY_DEADLINE + MIN);
    expect(store.alerts()).toEqual([]);
  });

  it('resolves when the file arrives late, saying so and when (with the zone)', () => {
    const { engine, store, step } = setup(rule(''), MONDAY_MIDNIGHT);
    step(MONDAY_DEADLINE);
    engine.observe(transfer({ time: MONDAY_DEADLINE + 20 * MIN }));
    const changes = step(MONDAY_DEADLINE + 25 * MIN);
    expect(changes.map((c) => [c.from, c.to])).toEqual([['firing', 'resolved']]);
    const resolved = store.alerts()[0];
    expect(resolved?.state).toBe('resolved');
    expect(resolved?.annotations['resolution']).toBe(
      'arrived late at 2026-11-23 08:20:00 -03:00 (America/Sao_Paulo) (deadline 2026-11-23 08:00:00 -03:00 (America/Sao_Paulo), +20m)',
    );
    expect(resolved?.annotations['summary']).toContain('arrived late at 2026-11-23 08:20:00 -03:00 (America/Sao_Paulo)');
    expect(resolved?.values['arrived_at_ms']).toBe(MONDAY_DEADLINE + 20 * MIN);
  });

  it('warn_before raises an "in jeopardy" warning that long before the deadline while nothing has arrived', () => {
    const { engine, store, step } = setup(rule('    warn_before: 30m'), MONDAY_MIDNIGHT);
    expect(step(MONDAY_DEADLINE - 31 * MIN)).toEqual([]);
    expect(step(MONDAY_DEADLINE - 30 * MIN).map((c) => c.alert.labels)).toEqual([
      { alertname: 'StatementMissing', severity: 'warning', source: 'prod', phase: 'jeopardy' },
    ]);
    expect(store.alerts()[0]?.annotations['summary']).toBe(
      'StatementMissing: expected file not received yet; deadline 2026-11-23 08:00:00 -03:00 (America/Sao_Paulo)',
    );
    // The file arrives before the deadline: the warning resolves and nothing fires at the deadline.
    engine.observe(transfer({ time: MONDAY_DEADLINE - 10 * MIN }));
    expect(step(MONDAY_DEADLINE - 5 * MIN).map((c) => c.to)).toEqual(['resolved']);
    // Its resolved message says how it ended, not "not received yet" again.
    const ended = store.alerts()[0];
    expect(ended?.annotations['summary']).toBe(
      'StatementMissing: no longer in jeopardy: the file arrived at 2026-11-23 07:50:00 -03:00 (America/Sao_Paulo), before its deadline 2026-11-23 08:00:00 -03:00 (America/Sao_Paulo)',
    );
    expect(ended?.annotations['description']).toBe('1 of 1 expected transfers arrived by the deadline 2026-11-23 08:00:00 -03:00 (America/Sao_Paulo).');
    expect(step(MONDAY_DEADLINE + MIN)).toEqual([]);
  });

  it('the warning gives way to the missing alert at the deadline', () => {
    const { store, step } = setup(rule('    warn_before: 30m'), MONDAY_MIDNIGHT);
    step(MONDAY_DEADLINE - 30 * MIN);
    const changes = step(MONDAY_DEADLINE);
    expect(changes.map((c) => [c.alert.labels['phase'] ?? 'missing', c.to]).sort()).toEqual([
      ['jeopardy', 'resolved'],
      ['missing', 'firing'],
    ]);
    expect(store.alerts().filter((a) => a.state === 'firing').map((a) => a.labels['phase'])).toEqual([undefined]);
    // The warning's own last words, for a channel that gets it apart from the missing alert (grouped by phase).
    expect(store.alerts().find((a) => a.labels['phase'] === 'jeopardy')?.annotations['summary']).toBe(
      'StatementMissing: the deadline 2026-11-23 08:00:00 -03:00 (America/Sao_Paulo) passed without the file: it is reported missing',
    );
  });

  it('hands on its last evaluation while nothing that decides it has changed, and decides again as soon as something has', () => {
    const { engine } = setup(rule('    warn_before: 30m'), MONDAY_MIDNIGHT);
    const evaluate = (at: number, until: number = at) => {
      const data: DataCompleteness = { completeUntil: () => until, completeFrom: () => MONDAY_MIDNIGHT };
      const [evaluation] = engine.evaluate(at, data);
      return evaluation;
    };
    const quiet = evaluate(MONDAY_DEADLINE - 2 * HOUR);
    expect(quiet?.alerts).toEqual([]);
    // Time passing before the warning is due, the data read further: the same evaluation.
    expect(evaluate(MONDAY_DEADLINE - HOUR)).toBe(quiet);
    // The warning's time comes.
    const warning = evaluate(MONDAY_DEADLINE - 30 * MIN);
    expect(warning?.alerts.map((a) => a.labels['phase'])).toEqual(['jeopardy']);
    expect(evaluate(MONDAY_DEADLINE - 20 * MIN)).toBe(warning);
    // The deadline passes but the data are not read up to it: the warning stands.
    const awaiting = evaluate(MONDAY_DEADLINE + 4 * MIN, MONDAY_DEADLINE - MIN);
    expect(awaiting).toEqual(warning);
    expect(evaluate(MONDAY_DEADLINE + 5 * MIN, MONDAY_DEADLINE - MIN)).toBe(awaiting);
    // Read past it: missing.
    const missing = evaluate(MONDAY_DEADLINE + 6 * MIN);
    expect(missing?.alerts.map((a) => a.labels['phase'] ?? 'missing')).toEqual(['missing']);
    expect(evaluate(MONDAY_DEADLINE + 7 * MIN)).toBe(missing);
    // A file stamped ahead of the clock (skew) counts once its time has come, not before and not never.
    engine.observe(transfer({ time: MONDAY_DEADLINE + 20 * MIN }));
    const ahead = evaluate(MONDAY_DEADLINE + 8 * MIN);
    expect(ahead?.alerts).toHaveLength(1);
    expect(ahead?.resolved).toEqual([]);
    const arrived = evaluate(MONDAY_DEADLINE + 21 * MIN);
    expect(arrived?.alerts).toEqual([]);
    expect(arrived?.resolved?.map((c) => c.values['arrived_at_ms'])).toEqual([MONDAY_DEADLINE + 20 * MIN]);
  });

  it('a file read after an evaluation that is stamped before it is decided on at the next one', () => {
    const { engine, step } = setup(rule(''), MONDAY_MIDNIGHT);
    expect(step(MONDAY_DEADLINE + 10 * MIN).map((c) => c.to)).toEqual(['firing']);
    expect(step(MONDAY_DEADLINE + 11 * MIN)).toEqual([]);
    // A late file the poller reads only now (a slow source), stamped before both evaluations.
    engine.observe(transfer({ time: MONDAY_DEADLINE + 5 * MIN }));
    expect(step(MONDAY_DEADLINE + 12 * MIN).map((c) => c.to)).toEqual(['resolved']);
  });

  it('calendar: excluded dates and weekdays have no deadline', () => {
    const holiday = Date.parse('2026-11-20T11:00:00Z'); // Friday
    const yaml = rule('    calendar: { exclude_dates: ["2026-11-20"], exclude_weekdays: [mon] }');
    const { store, step } = setup(yaml, Date.parse('2026-11-20T03:00:00Z'));
    step(holiday + HOUR);
    expect(store.alerts()).toEqual([]);
    // Monday is excluded too: the next deadline that counts is Tuesday 08:00 (11:00 UTC).
    const { engine } = setup(yaml, holiday);
    expect(engine.nextWakeup(holiday)).toBe(Date.parse('2026-11-24T11:00:00Z'));
    const tuesday = setup(yaml, Date.parse('2026-11-24T03:00:00Z'));
    tuesday.step(Date.parse('2026-11-24T11:00:00Z'));
    expect(tuesday.store.alerts().map((a) => a.state)).toEqual(['firing']);
  });

  it('for_each expects the file once per value and alerts only for the missing ones', () => {
    const { engine, store, step } = setup(rule('    for_each: { label: user, values: [BANK1, BANK2, BANK3] }'), MONDAY_MIDNIGHT);
    engine.observe(transfer({ time: MONDAY_DEADLINE - HOUR, user: 'BANK1' }));
    engine.observe(transfer({ time: MONDAY_DEADLINE - HOUR, user: 'BANK9' })); // not expected: ignored
    step(MONDAY_DEADLINE);
    expect(store.alerts().map((a) => a.labels['user']).sort()).toEqual(['BANK2', 'BANK3']);
  });

  it('min_count counts arrivals', () => {
    const { engine, store, step } = setup(rule('    min_count: 2'), MONDAY_MIDNIGHT);
    engine.observe(transfer({ time: MONDAY_DEADLINE - HOUR }));
    step(MONDAY_DEADLINE);
    expect(store.alerts()[0]?.values['count']).toBe(1);
  });

  it('needs all matching sources complete, and labels `source` only when one source is relevant', () => {
    const two = setup(rule(''), MONDAY_MIDNIGHT, ['prod', 'dr']);
    two.clock.set(MONDAY_DEADLINE);
    const partial: DataCompleteness = {
      completeUntil: (source) => (source === 'prod' ? MONDAY_DEADLINE : MONDAY_DEADLINE - HOUR),
      completeFrom: () => MONDAY_MIDNIGHT,
    };
    expect(two.store.apply(two.engine.evaluate(MONDAY_DEADLINE, partial), MONDAY_DEADLINE)).toEqual([]);
    two.step(MONDAY_DEADLINE + MIN);
    expect(two.store.alerts()[0]?.labels['source']).toBeUndefined();
  });

  it('wakes up at the warning and the deadline, and asks for enough history to re-decide the last two deadlines', () => {
    const { engine } = setup(rule('    warn_before: 30m'), MONDAY_MIDNIGHT);
    expect(engine.nextWakeup(MONDAY_MIDNIGHT)).toBe(MONDAY_DEADLINE - 30 * MIN);
    expect(engine.nextWakeup(MONDAY_DEADLINE - 30 * MIN)).toBe(MONDAY_DEADLINE);
    // Weekdays only: the longest gap is Friday → Monday (3 days).
    expect(engine.historyNeeded()).toBe(8 * HOUR + 2 * 3 * 24 * HOUR);
  });
});

describe('missing_file across DST changes (America/New_York)', () => {
  it('spring forward: an 08:00 deadline moves from 13:00 to 12:00 UTC', () => {
    const { store, step } = setup(rule('', '0 8 * * *', 'America/New_York'), Date.parse('2026-03-08T00:00:00Z'));
    step(Date.parse('2026-03-08T11:59:00Z'));
    expect(store.alerts()).toEqual([]);
    step(Date.parse('2026-03-08T12:00:00Z'));
    const alert = store.alerts()[0];
    expect(alert?.values['deadline_ms']).toBe(Date.parse('2026-03-08T12:00:00Z'));
    expect(alert?.annotations['summary']).toContain('2026-03-08 08:00:00 -04:00 (America/New_York)');
  });

  it('spring forward: a deadline in the skipped hour (02:30) happens once, at 03:30 EDT', () => {
    const { engine, store, step } = setup(rule('', '30 2 * * *', 'America/New_York'), Date.parse('2026-03-07T22:00:00Z'));
    expect(engine.nextWakeup(Date.parse('2026-03-08T05:00:00Z'))).toBe(Date.parse('2026-03-08T07:30:00Z'));
    step(Date.parse('2026-03-08T07:29:00Z'));
    expect(store.alerts()).toEqual([]);
    step(Date.parse('2026-03-08T07:30:00Z'));
    expect(store.alerts().map((a) => a.state)).toEqual(['firing']);
  });

  it('fall back: a deadline in the repeated hour (01:30) is decided once', () => {
    const start = Date.parse('2026-10-31T20:00:00Z');
    const { engine, store, step } = setup(rule('', '30 1 * * *', 'America/New_York'), start);
    const first = Date.parse('2026-11-01T05:30:00Z'); // 01:30 EDT
    expect(engine.nextWakeup(first - MIN)).toBe(first);
    expect(engine.nextWakeup(first)).toBe(Date.parse('2026-11-02T06:30:00Z')); // not 06:30Z on the same day
    step(first);
    expect(store.alerts()[0]?.values['deadline_ms']).toBe(first);
    // An hour later the wall clock shows 01:30 again (EST): nothing new happens.
    engine.observe(transfer({ time: first + 30 * MIN }));
    const changes = step(first + HOUR);
    expect(changes.map((c) => c.to)).toEqual(['resolved']); // the late file resolves the one alert
    expect(store.alerts()).toHaveLength(1);
  });

  it('Europe/Berlin: an 08:00 deadline keeps local time over the October change', () => {
    const { engine } = setup(rule('', '0 8 * * *', 'Europe/Berlin'), Date.parse('2026-10-24T00:00:00Z'));
    expect(engine.nextWakeup(Date.parse('2026-10-24T12:00:00Z'))).toBe(Date.parse('2026-10-25T07:00:00Z')); // CET
    expect(engine.nextWakeup(Date.parse('2026-10-23T12:00:00Z'))).toBe(Date.parse('2026-10-24T06:00:00Z')); // CEST
  });
});

describe('missing_file: the ledger', () => {
  /** An engine telling the ledger, its occurrences, and a step that evaluates with the data read up to `at`. */
  function ledger(ruleYaml: string, start: number) {
    const clock = new ManualClock(start);
    const told: OccurrenceRecord[] = [];
    const engine = new RuleEngine(rulesFrom(ruleYaml), { clock, logger: silentLogger(), sources: ['prod'], onOccurrence: (o) => told.push(o) });
    const step = (at: number) => {
      clock.set(at);
      engine.evaluate(at, { completeUntil: () => at, completeFrom: () => start });
    };
    const last = (deadline: number) => told.filter((o) => o.deadline === deadline).at(-1);
    return { engine, step, last };
  }
  const arrival = (time: number, file: string) => transfer({ time, file, event: 'reception', eventCode: 5 });

  it('an on-time occurrence keeps as evidence the min_count files that met it, in time order however they came, and counts them all', () => {
    const { engine, step, last } = ledger(rule('    min_count: 2'), MONDAY_MIDNIGHT);
    const D = MONDAY_DEADLINE;
    for (const [hours, file] of [[7, 'EXTRATO_A.RET'], [5, 'EXTRATO_C.RET'], [3, 'EXTRATO_D.RET'], [2, 'EXTRATO_E.RET'], [6, 'EXTRATO_B.RET']] as const) {
      engine.observe(arrival(D - hours * HOUR, file));
    }
    step(D + MIN);
    expect(last(D)).toMatchObject({ outcome: 'on_time', count: 5, arrived_at: D - 6 * HOUR });
    expect(last(D)?.files).toEqual([
      { file: 'EXTRATO_A.RET', at: D - 7 * HOUR, source: 'prod' },
      { file: 'EXTRATO_B.RET', at: D - 6 * HOUR, source: 'prod' },
    ]);
  });

  it('a missing occurrence keeps the file that came after it closed (until the next deadline), with its millisecond', () => {
    const { engine, step, last } = ledger(rule('    sla: { late_until: 1h }'), MONDAY_MIDNIGHT);
    const D = MONDAY_DEADLINE;
    step(D + HOUR + MIN);
    expect(last(D)).toMatchObject({ outcome: 'missing', final: true, after_close: [] });
    // 09:00:44.123 São Paulo: 44 s after the close. It changes nothing, and the partner can see it.
    engine.observe(arrival(D + HOUR + 44_123, 'EXTRATO_LATE.RET'));
    step(D + HOUR + 2 * MIN);
    expect(last(D)).toMatchObject({ outcome: 'missing', final: true, after_close: [{ file: 'EXTRATO_LATE.RET', at: D + HOUR + 44_123, source: 'prod' }] });
  });

  it('one file, one deadline: a day without its file closes when the next window opens, and the next day\'s file is on time for that day only (11c)', () => {
    // Daily at 09:00, window 2h: Monday's occurrence closes at Tuesday 07:00, when Tuesday's window opens.
    const daily = `
rules:
- name: StatementMissing
  type: missing_file
  match: { event: [reception], file: ["EXTRATO_*"] }
  deadline: "0 9 * * *"
  timezone: UTC
  window: 2h
  severity: warning
`;
    const monday = Date.parse('2026-11-23T09:00:00Z');
    const tuesday = monday + 24 * HOUR;
    const { engine, step, last } = ledger(daily, monday - 3 * HOUR);
    step(monday + MIN);
    expect(last(monday)).toMatchObject({ outcome: 'missing', final: false, closes_at: tuesday - 2 * HOUR });
    // Tuesday's file at 08:00 is Tuesday's, on time: never Monday's late file.
    engine.observe(arrival(tuesday - HOUR, 'EXTRATO_TUE.RET'));
    step(tuesday + MIN);
    expect(last(monday)).toMatchObject({ outcome: 'missing', final: true, arrived_at: null, after_close: [] });
    expect(last(tuesday)).toMatchObject({ outcome: 'on_time', arrived_at: tuesday - HOUR });
  });

  it('every after_close entry names its file and source: early files and second copies alike (11c)', () => {
    // Daily at 09:00, window 2h, late until 10:00: Monday has two files in its window (one is its evidence), none after.
    const daily = `
rules:
- name: StatementMissing
  type: missing_file
  match: { event: [reception], file: ["EXTRATO_*"] }
  deadline: "0 9 * * *"
  timezone: UTC
  window: 2h
  sla: { late_until: 1h }
  severity: warning
`;
    const monday = Date.parse('2026-11-23T09:00:00Z');
    const tuesday = monday + 24 * HOUR;
    const { engine, step, last } = ledger(daily, monday - 3 * HOUR);
    engine.observe(arrival(monday - HOUR, 'EXTRATO_MON_1'));
    engine.observe(arrival(monday - HOUR / 2, 'EXTRATO_MON_2'));
    // After Monday's close (10:00): an early one before Tuesday's window, then three in it (the first is Tuesday's).
    engine.observe(arrival(tuesday - 3 * HOUR, 'EXTRATO_EARLY'));
    for (const [minutes, file] of [[110, 'EXTRATO_TUE_1'], [100, 'EXTRATO_TUE_2'], [90, 'EXTRATO_TUE_3']] as const) {
      engine.observe(arrival(tuesday - minutes * MIN, file));
    }
    step(tuesday + MIN);
    expect(last(monday)).toMatchObject({ outcome: 'on_time', files: [{ file: 'EXTRATO_MON_1', source: 'prod' }] });
    expect(last(monday)?.after_close).toEqual([
      { file: 'EXTRATO_EARLY', at: tuesday - 3 * HOUR, source: 'prod' },
      { file: 'EXTRATO_TUE_2', at: tuesday - 100 * MIN, source: 'prod' },
      { file: 'EXTRATO_TUE_3', at: tuesday - 90 * MIN, source: 'prod' },
    ]);
    expect(last(tuesday)?.files.map((f) => f.file)).toEqual(['EXTRATO_TUE_1']);
  });

  it('a missing file\'s alert resolves as late only for a file before its close; the next period\'s file leaves it to the next deadline', () => {
    // Daily at 08:00, window 8h: Monday's occurrence closes at Tuesday 00:00, when Tuesday's window opens.
    const { engine, store, step } = setup(rule('', '0 8 * * *'), MONDAY_MIDNIGHT);
    expect(step(MONDAY_DEADLINE + MIN).map((c) => c.to)).toEqual(['firing']);
    // A file in Tuesday's window (after the close): not "arrived late"; the alert stays until the next verdict.
    engine.observe(transfer({ time: MONDAY_DEADLINE + 20 * HOUR }));
    expect(step(MONDAY_DEADLINE + 20 * HOUR + MIN)).toEqual([]);
    expect(store.alerts()[0]?.state).toBe('firing');
    // The next deadline has its file: resolved, and not by a late arrival — the message says which file ended it.
    const changes = step(MONDAY_DEADLINE + 24 * HOUR + MIN);
    expect(changes.map((c) => c.to)).toEqual(['resolved']);
    expect(changes[0]?.alert.annotations['resolution']).toBe(
      'the next file arrived at 2026-11-24 04:00:00 -03:00 (America/Sao_Paulo), on time for the deadline 2026-11-24 08:00:00 -03:00 (America/Sao_Paulo); the deadline 2026-11-23 08:00:00 -03:00 (America/Sao_Paulo) stays missing',
    );
  });

  it('where windows overlap, the deadlines take files in arrival order, each its own: no file is evidence twice (11c)', () => {
    // Every hour, over the last three: an arrival is in three deadlines' windows, and counts for the first that takes it.
    const hourly = `
rules:
- name: PositionLate
  type: missing_file
  match: { event: [reception], file: ["POS_*"] }
  deadline: "0 * * * *"
  timezone: UTC
  window: 3h
  sla: { late_until: 30m }
  severity: warning
`;
    const start = Date.parse('2026-11-23T06:00:00Z');
    const at = (hhmm: string) => Date.parse(`2026-11-23T${hhmm}:00Z`);
    const { engine, step, last } = ledger(hourly, start);
    for (const [time, file] of [['10:35', 'POS_1'], ['10:40', 'POS_2'], ['11:30', 'POS_3'], ['11:45', 'POS_4']] as const) {
      engine.observe(arrival(at(time), file));
    }
    for (const hour of ['10:31', '11:01', '12:01', '13:01', '14:01']) step(at(hour));
    // 10:00 closed at 10:30 without a file; 11:00 takes the first, 12:00 the second (the first is taken), and so on.
    expect(last(at('10:00'))).toMatchObject({ outcome: 'missing', final: true });
    expect(last(at('11:00'))?.files.map((f) => f.file)).toEqual(['POS_1']);
    expect(last(at('12:00'))).toMatchObject({ outcome: 'on_time', count: 3 });
    expect(last(at('12:00'))?.files.map((f) => f.file)).toEqual(['POS_2']);
    expect(last(at('13:00'))?.files.map((f) => f.file)).toEqual(['POS_3']);
    expect(last(at('14:00'))).toMatchObject({ outcome: 'on_time', count: 1 });
    expect(last(at('14:00'))?.files.map((f) => f.file)).toEqual(['POS_4']);
    // Nothing from 12:00 to 15:00 but one at 15:10: late for 15:00, and the file that made it so is named.
    engine.observe(arrival(at('15:10'), 'POS_5'));
    step(at('15:20'));
    // 15:00 is still open (until 15:30) and comes before 16:00: the file is its, late.
    expect(last(at('15:00'))).toMatchObject({ outcome: 'late', count: 1, arrived_at: at('15:10') });
    expect(last(at('15:00'))?.files.map((f) => f.file)).toEqual(['POS_5']);
  });
});

describe('missing_file across a stop', () => {
  const hourly = `
rules:
  - name: HourlyFile
    type: missing_file
    match: { event: [reception], file: ["EXTRATO_*.RET"] }
    deadline: "0 * * * *"
    timezone: UTC
    window: 30m
    severity: warning
`;
  const D0 = Date.parse('2026-11-23T10:00:00Z');
  const D1 = D0 + HOUR;
  const D2 = D0 + 2 * HOUR;
  const logger = silentLogger();

  /** One process of the daemon on the shared state: its engine, its store, and a step that evaluates on data read to `t`. */
  async function life(state: MemoryStateStore, clock: ManualClock, restore: boolean) {
    const engine = new RuleEngine(rulesFrom(hourly), { clock, logger, sources: ['prod'] });
    const store = new AlertStore({ clock, logger, state });
    if (restore) await store.restore();
    const step = (t: number) => {
      clock.set(t);
      const data: DataCompleteness = { completeUntil: () => t, completeFrom: () => D0 - 40 * MIN };
      return store.apply(engine.evaluate(t, data), t);
    };
    return { engine, store, step, moves: (t: number) => step(t).map((c) => `${c.from}->${c.to}`) };
  }

  it('tells the episode a late file ended during the stop before opening the next deadline’s, as a process that never stopped', async () => {
    const state = new MemoryStateStore();
    const clock = new ManualClock(D0 - 40 * MIN);
    // The first process: D0 missed, the alert fires; it stops before D1's late file.
    const first = await life(state, clock, false);
    expect(first.moves(D0 + MIN)).toEqual(['inactive->firing']);
    await first.store.flush({ force: true });

    // D1 missed; its file comes late at D1 + 10 min (before D2's window opens): nobody runs. The next process starts
    // after D2, which is missed too, and reads the history whole.
    clock.set(D2 + MIN);
    const second = await life(state, clock, true);
    second.engine.observe(transfer({ time: D1 + 10 * MIN }));
    const ended = second.step(D2 + MIN);
    expect(ended.map((c) => `${c.from}->${c.to}`)).toEqual(['firing->resolved']);
    expect(ended[0]?.alert.annotations['resolution']).toMatch(/^arrived late at 2026-11-23 11:10:00/);
    // The next evaluation opens D2's episode: a new alert, not the old one carried on.
    const opened = second.step(D2 + 2 * MIN);
    expect(opened.map((c) => `${c.from}->${c.to}`)).toEqual(['resolved->firing']);
    expect(opened[0]?.alert.values['deadline_ms']).toBe(D2);
  });

  it('leaves an episode that began after the late file as it is (the previous process told both already)', async () => {
    const state = new MemoryStateStore();
    const clock = new ManualClock(D0 - 40 * MIN);
    const first = await life(state, clock, false);
    expect(first.moves(D0 + MIN)).toEqual(['inactive->firing']);
    first.engine.observe(transfer({ time: D1 + 10 * MIN }));
    expect(first.moves(D1 + 11 * MIN)).toEqual(['firing->resolved']);
    expect(first.moves(D2 + MIN)).toEqual(['resolved->firing']);
    await first.store.flush({ force: true });

    // A restart right after: the episode of D2 goes on, untouched.
    clock.set(D2 + 3 * MIN);
    const second = await life(state, clock, true);
    second.engine.observe(transfer({ time: D1 + 10 * MIN }));
    expect(second.moves(D2 + 3 * MIN)).toEqual([]);
    expect(second.moves(D2 + 4 * MIN)).toEqual([]);
    expect(second.store.alerts().map((a) => [a.state, a.values['deadline_ms']])).toEqual([['firing', D2]]);
  });
});
