import { afterAll, describe, expect, it } from 'vitest';
import { AlertStore } from '../../src/alerts/alert-store.js';
import type { AlertCandidate } from '../../src/alerts/alert-candidate.js';
import { HistoryJournal } from '../../src/history/history-journal.js';
import { HistoryRecorder } from '../../src/history/history-recorder.js';
import type { AttemptRecord } from '../../src/history/history-records.js';
import type { HistoryStore } from '../../src/history/history-store.js';
import { MemoryStateStore, type StateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';

const all = { matchers: [], from: 0, to: Number.MAX_SAFE_INTEGER, limit: 1_000 };

function candidate(user: string, forMs = 0): AlertCandidate {
  return { labels: { alertname: 'TransferErrorBurst', user }, annotations: { summary: `burst ${user}` }, values: {}, samples: [], for: forMs, keepFiringFor: 0 };
}

function attempt(n: number): AttemptRecord {
  return { kind: 'attempt', id: `k:${n}`, at: n, receiver: 'oncall', integration: 'webhook', status: 'firing', fingerprints: ['fp'], alerts: [{ alertname: 'A' }], title: 'A', outcome: 'sent', attempt: 1, error: null, duration_ms: 3 };
}

/**
 * A store whose writes fail while `down` (the database is unreachable), are refused with `refuse` while reads still
 * answer (a read-only file, a full disk), or are refused for the records whose ids are in `bad` (their content).
 */
function flaky(store: HistoryStore): HistoryStore & { down: boolean; refuse: Error | undefined; bad: Set<string>; hung: Promise<void> | undefined } {
  const wrapped = Object.create(store) as HistoryStore & { down: boolean; refuse: Error | undefined; bad: Set<string>; hung: Promise<void> | undefined };
  wrapped.down = false;
  wrapped.refuse = undefined;
  wrapped.bad = new Set();
  wrapped.hung = undefined;
  wrapped.write = async (records) => {
    await wrapped.hung;
    if (wrapped.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    if (wrapped.refuse) throw wrapped.refuse;
    if (records.some((r) => wrapped.bad.has(r.id))) throw Object.assign(new Error('CHECK constraint failed: value too long'), { code: 'SQLITE_CONSTRAINT_CHECK' });
    return store.write(records);
  };
  wrapped.ping = async () => {
    await wrapped.hung;
    if (wrapped.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return store.ping();
  };
  return wrapped;
}

describe.each(BACKENDS)('history recorder on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  async function setup(state: StateStore = new MemoryStateStore()) {
    const clock = new ManualClock(1_000_000);
    const store = flaky(await backend.open());
    const alerts = new AlertStore({ clock, logger: silentLogger(), state, recordHistory: true });
    const journal = new HistoryJournal(state, silentLogger());
    await journal.restore();
    const ups: boolean[] = [];
    const givenUp: string[] = [];
    const logged: string[] = [];
    const logger = silentLogger();
    logger.error = ((obj: unknown, msg?: string) => void logged.push(msg ?? String(obj))) as typeof logger.error;
    const recorder = new HistoryRecorder({
      store,
      journal,
      alerts: () => alerts,
      clock,
      logger,
      retentionMs: 400 * 86_400_000,
      onUp: (up) => ups.push(up),
      onGivenUp: (kind) => givenUp.push(kind),
      hungAfterMs: 300,
    });
    return { clock, store, alerts, journal, recorder, ups, state, givenUp, logged };
  }

  it('writes only the alert events of a saved snapshot: a transition not yet saved is not in the database', async () => {
    const { clock, alerts, recorder, store } = await setup();
    alerts.apply([{ rule: 'TransferErrorBurst', alerts: [candidate('BANK1')] }], clock.now());
    await recorder.drain();
    expect((await store.alertEvents(all)).items).toEqual([]);
    await alerts.flush();
    await recorder.drain();
    expect((await store.alertEvents(all)).items.map((e) => e.event)).toEqual(['firing']);
    await recorder.stop();
  });

  it('keeps everything through an outage, says so, and writes each record once when the database is back', async () => {
    const state = new MemoryStateStore();
    const { clock, alerts, recorder, store, ups } = await setup(state);
    store.down = true;
    alerts.apply([{ rule: 'TransferErrorBurst', alerts: [candidate('BANK1', 60_000)] }], clock.now());
    clock.advance(60_000);
    alerts.apply([{ rule: 'TransferErrorBurst', alerts: [candidate('BANK1', 60_000)] }], clock.now());
    await alerts.flush();
    await recorder.attempt(attempt(1));
    await recorder.drain();
    expect(ups.at(-1)).toBe(false);
    expect(recorder.failingSince).toBe(clock.now());
    expect(recorder.backlog).toBe(3);

    // The leader dies here: a new one restores the alert snapshot and the journal from the shared state.
    const next = await setup(state);
    await next.alerts.restore();
    next.store.down = false;
    await next.recorder.drain();
    await recorder.stop();
    expect(next.ups.at(-1)).toBe(true);
    const events = await next.store.alertEvents(all);
    // (A new database: the first leader never reached its own.)
    expect(events.items.map((e) => e.event)).toEqual(['firing', 'pending']);
    expect((await next.store.attempts(all)).items.map((a) => a.id)).toEqual(['k:1']);
    expect(next.recorder.backlog).toBe(0);
    // Written again (a crash before the journal was compacted): still once.
    await next.store.write([...events.items, attempt(1)]);
    expect((await next.store.alertEvents(all)).items).toHaveLength(2);
    await next.recorder.stop();
  });

  it('a write refused for a reason of the store (read-only, full) while reads still answer loses nothing: down, kept, written when it takes writes again', async () => {
    const { recorder, store, ups, givenUp } = await setup();
    for (const refusal of [
      Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' }),
      Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 }),
      Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' }),
      Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }),
      new Error('cannot rollback - no transaction is active'),
    ]) {
      store.refuse = refusal;
      await recorder.attempt(attempt(1));
      await recorder.drain();
      expect(ups.at(-1), refusal.message).toBe(false);
      expect(recorder.backlog, refusal.message).toBe(1);
      expect(recorder.refused).toBe(0);
    }
    expect(givenUp).toEqual([]);
    store.refuse = undefined;
    await recorder.drain();
    expect(ups.at(-1)).toBe(true);
    expect(recorder.backlog).toBe(0);
    expect((await store.attempts(all)).items.map((a) => a.id)).toEqual(['k:1']);
    await recorder.stop();
  });

  it('a database that hangs (a statement unanswered) is down within the hung time, and up again once it answers', async () => {
    const { recorder, store, ups } = await setup();
    let answer!: () => void;
    store.hung = new Promise((resolve) => (answer = resolve));
    await recorder.attempt(attempt(1));
    const drained = recorder.drain();
    await new Promise((r) => setTimeout(r, 600));
    expect(ups.at(-1)).toBe(false);
    expect(recorder.failingSince).toBeDefined();
    answer();
    store.hung = undefined;
    await drained;
    expect(ups.at(-1)).toBe(true);
    expect((await store.attempts(all)).items.map((a) => a.id)).toEqual(['k:1']);
    await recorder.stop();
  });

  it('records refused for their own content are given up alone, counted, and said once per kind of refusal', async () => {
    const { recorder, store, ups, givenUp, logged } = await setup();
    store.bad = new Set(['k:2', 'k:3']);
    for (const n of [1, 2, 3, 4]) await recorder.attempt(attempt(n));
    await recorder.drain();
    expect(ups.at(-1)).toBe(true);
    expect((await store.attempts(all)).items.map((a) => a.id).sort()).toEqual(['k:1', 'k:4']);
    expect(recorder.refused).toBe(2);
    expect(givenUp).toEqual(['attempt', 'attempt']);
    expect(logged.filter((m) => m.includes('given up'))).toHaveLength(1);
    expect(recorder.backlog).toBe(0);
    await recorder.stop();
  });

  it('records silenced and inhibited changes once each, naming the silence and the inhibiting alert', async () => {
    const { clock, alerts, recorder, store } = await setup();
    alerts.apply([{ rule: 'TransferErrorBurst', alerts: [candidate('BANK1')] }], clock.now());
    const fp = alerts.alerts()[0]!.fingerprint;
    alerts.setMuted(fp, ['s1'], [], clock.now());
    alerts.setMuted(fp, ['s1'], [], clock.now() + 1);
    clock.advance(1_000);
    alerts.setMuted(fp, [], ['inhibitor-fp'], clock.now());
    await alerts.flush();
    await recorder.drain();
    const events = (await store.alertEvents(all)).items.reverse();
    expect(events.map((e) => [e.event, e.silence_id, e.inhibited_by])).toEqual([
      ['firing', null, null],
      ['silenced', 's1', null],
      ['inhibited', null, 'inhibitor-fp'],
      ['unsilenced', 's1', null],
    ]);
    await recorder.stop();
  });

  it('turns silences into created, updated and expired events, each once', async () => {
    const { clock, recorder, store } = await setup();
    const base = { id: 's1', matchers: [{ name: 'user', value: 'BANK1', isRegex: false, isEqual: true }], createdBy: 'ana', comment: 'maintenance', status: { state: 'active' as const } };
    const t0 = clock.now();
    const v1 = { ...base, startsAt: new Date(t0).toISOString(), endsAt: new Date(t0 + 3_600_000).toISOString(), updatedAt: new Date(t0).toISOString() };
    await recorder.silences([v1], clock.now());
    await recorder.silences([v1], clock.now());
    const v2 = { ...v1, comment: 'longer maintenance', endsAt: new Date(t0 + 7_200_000).toISOString(), updatedAt: new Date(t0 + 60_000).toISOString() };
    await recorder.silences([v2], t0 + 60_000);
    await recorder.silences([v2], t0 + 7_200_000);
    await recorder.silences([v2], t0 + 7_300_000);
    await recorder.drain();
    const events = (await store.silenceEvents(all)).items.reverse();
    expect(events.map((e) => [e.event, e.at - t0, e.comment])).toEqual([
      ['created', 0, 'maintenance'],
      ['updated', 60_000, 'longer maintenance'],
      ['expired', 7_200_000, 'longer maintenance'],
    ]);
    await recorder.stop();
  });
});
