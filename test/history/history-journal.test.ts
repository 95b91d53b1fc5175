import { describe, expect, it } from 'vitest';
import { HISTORY_JOURNAL_KEY, HistoryJournal, MAX_JOURNALED_RECORDS } from '../../src/history/history-journal.js';
import type { AttemptRecord } from '../../src/history/history-records.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { silentLogger } from '../../src/util/logger.js';

function attempt(n: number): AttemptRecord {
  return { kind: 'attempt', id: `k:${n}`, at: n, receiver: 'oncall', integration: 'webhook', status: 'firing', fingerprints: ['fp'], alerts: [], title: 'A', outcome: 'sent', attempt: 1, error: null, duration_ms: 3 };
}

describe('the history journal while the database is down', () => {
  it('is bounded in the state store as in memory, and does not grow from one start to the next', async () => {
    const state = new MemoryStateStore();
    const journal = new HistoryJournal(state, silentLogger());
    await journal.restore();
    const total = MAX_JOURNALED_RECORDS + 1_500;
    for (let n = 0; n < total; n += 500) await journal.add(Array.from({ length: 500 }, (_, i) => attempt(n + i)));
    // Nothing was written to the database: what is kept is the newest MAX_JOURNALED_RECORDS, and the appended
    // lines were replaced by a snapshot of them rather than piling up.
    expect(journal.size).toBe(MAX_JOURNALED_RECORDS);
    expect(journal.dropped).toBe(1_500);
    expect((await state.journal(HISTORY_JOURNAL_KEY)).length).toBeLessThan(MAX_JOURNALED_RECORDS);

    const next = new HistoryJournal(state, silentLogger());
    await next.restore();
    expect(next.size).toBe(MAX_JOURNALED_RECORDS);
    expect(next.pending(1)[0]?.id).toBe('k:1500');
    // The restored records are one snapshot again: a second start reads no appended line.
    expect(await state.journal(HISTORY_JOURNAL_KEY)).toEqual([]);
  });
});
