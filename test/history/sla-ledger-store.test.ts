import { afterAll, describe, expect, it } from 'vitest';
import type { OccurrenceRecord } from '../../src/sla/occurrence.js';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../src/http/http-error.js';
import { slaHandlers } from '../../src/http/sla-routes.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';

/** A POST of `body` as JSON, as the HTTP server hands it on. */
function post(body: unknown): IncomingMessage {
  const text = JSON.stringify(body);
  return Object.assign(Readable.from([Buffer.from(text)]), {
    url: '/api/v1/sla/excuses',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
  }) as unknown as IncomingMessage;
}

function occurrence(user: string, deadline: number, outcome: OccurrenceRecord['outcome'], final: boolean, lateness: number | null = null): OccurrenceRecord {
  return {
    kind: 'occurrence',
    id: `R\u001fuser=${user}\u001f${deadline}`,
    at: deadline,
    rule: 'R',
    key: { user },
    key_text: `user=${user}`,
    local_date: new Date(deadline).toISOString().slice(0, 10),
    deadline,
    timezone: 'UTC',
    outcome,
    final,
    arrived_at: lateness === null ? null : deadline + lateness * 1000,
    lateness_seconds: lateness,
    count: outcome === 'missing' ? 0 : 1,
    min_count: 1,
    files: [],
    closes_at: deadline + 86_400_000,
    after_close: [],
  };
}

describe.each(BACKENDS)('SLA ledger store on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('reads a month for the grid without the files (the count stays), and with them for a statement', async () => {
    const store = await backend.open();
    const d = Date.UTC(2026, 9, 2, 8);
    const file = { file: 'A.RET', at: d - 60_000, source: 'prod' };
    await store.write([{ ...occurrence('A', d, 'on_time', true), files: [file] }]);
    const q = { from: '2026-10-02', to: '2026-10-02', limit: 10, offset: 0 };
    const light = await store.ledger.occurrences({ ...q, withoutFiles: true });
    expect(light.map((o) => [o.keyText, o.outcome, o.count, o.files])).toEqual([['user=A', 'on_time', 1, []]]);
    expect((await store.ledger.occurrences(q)).map((o) => o.files)).toEqual([[file]]);
  });

  it('upserts: missing becomes late, a final occurrence stays, no_data is replaced; tallies and excuses', async () => {
    const store = await backend.open();
    const d = Date.UTC(2026, 9, 1, 8);
    await store.write([occurrence('A', d, 'on_time', true), occurrence('B', d, 'missing', false), occurrence('C', d, 'no_data', false)]);
    await store.write([occurrence('B', d, 'late', true, 600), occurrence('A', d, 'missing', false), occurrence('C', d, 'missing', true)]);
    await store.write([occurrence('B', d, 'missing', true)]);
    // A file after the close of C's (final) missing: kept with it as evidence; the outcome stays.
    await store.write([{ ...occurrence('C', d, 'on_time', true), after_close: [{ file: 'C.RET', at: d + 86_400_000 + 44_123, source: 'prod' }] }]);
    const list = await store.ledger.occurrences({ from: '2026-10-01', to: '2026-10-01', limit: 100, offset: 0 });
    expect(list.map((o) => [o.keyText, o.outcome, o.latenessSeconds])).toEqual([
      ['user=A', 'on_time', null],
      ['user=B', 'late', 600],
      ['user=C', 'missing', null],
    ]);
    expect(list.map((o) => o.afterClose)).toEqual([[], [], [{ file: 'C.RET', at: d + 86_400_000 + 44_123, source: 'prod' }]]);
    await store.ledger.excuse({ rule: 'R', keyText: 'user=C', localDate: '2026-10-01', by: 'ana', at: d, reason: 'holiday' });
    const tally = await store.ledger.tally({ from: '2026-09-01', to: '2026-10-31' });
    expect(tally.map((t) => [t.keyText, t.on_time, t.late, t.missing, t.excused, t.latenessSeconds])).toEqual([
      ['user=A', 1, 0, 0, 0, []],
      ['user=B', 0, 1, 0, 0, [600]],
      ['user=C', 0, 0, 0, 1, []],
    ]);
    const withdrawal = { rule: 'R', keyText: 'user=C', localDate: '2026-10-01', by: 'bo', at: d + 1 };
    expect(await store.ledger.withdraw(withdrawal)).toBe(true);
    expect(await store.ledger.withdraw(withdrawal)).toBe(false);
    // Both are in the audit trail, newest first: who excused, who withdrew.
    const events = await store.ledger.excuseEvents({ from: 0, to: d + 10, limit: 10 });
    expect(events.items.map((e) => [e.event, e.by, e.reason, e.localDate, e.deadline])).toEqual([
      ['withdrawn', 'bo', '', '2026-10-01', null],
      ['excused', 'ana', 'holiday', '2026-10-01', null],
    ]);
  });

  it('refuses (409) to excuse a day whose every deadline was met, and excuses one with a deadline missed', async () => {
    const store = await backend.open();
    const met = Date.UTC(2026, 9, 5, 8);
    const missed = Date.UTC(2026, 9, 6, 8);
    await store.write([occurrence('D', met, 'on_time', true), occurrence('D', met + 4 * 3_600_000, 'on_time', true), occurrence('D', missed, 'missing', true)]);
    const sla = slaHandlers(() => ({ ledger: store.ledger, objective: () => 0.99 }), () => Date.UTC(2026, 9, 7));
    const refused = await sla.excuse(post({ rule: 'R', key: { user: 'D' }, local_date: '2026-10-05', reason: 'bank holiday', by: 'ana' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(409);
    expect((refused as HttpError).message).toBe('the occurrences of rule "R" for user=D on 2026-10-05 were on time: there is nothing to excuse');
    await expect(sla.excuse(post({ rule: 'R', key: { user: 'D' }, local_date: '2026-10-06', reason: 'bank holiday', by: 'ana' }))).resolves.toMatchObject({ status: 'success' });
    await expect(sla.excuse(post({ rule: 'R', key: { user: 'D' }, local_date: '2026-10-04', reason: 'x', by: 'ana' }))).rejects.toMatchObject({ status: 404 });
  });

  it('a re-judgement replaces final occurrences, keeps their excuses, says what changed and records the event (11c)', async () => {
    const store = await backend.open();
    const d1 = Date.UTC(2026, 9, 14, 8);
    const d2 = Date.UTC(2026, 9, 15, 8);
    await store.write([occurrence('G', d1, 'late', true, 82_800), occurrence('G', d2, 'on_time', true)]);
    await store.ledger.excuse({ rule: 'R', keyText: 'user=G', key: { user: 'G' }, localDate: '2026-10-14', by: 'ana', at: d2, reason: 'holiday' });
    // A final occurrence is never changed by a write...
    await store.write([occurrence('G', d1, 'missing', true)]);
    expect((await store.ledger.outcomeAt('R', 'user=G', d1))?.outcome).toBe('late');
    // ...but a re-judgement replaces it.
    const changes = await store.ledger.rejudge([occurrence('G', d1, 'missing', true), occurrence('G', d2, 'on_time', true)], { at: d2 + 1, by: 'bob', reason: 'upgrade', rule: 'R', from: '2026-10-14', to: '2026-10-15' });
    expect(changes).toEqual([{ rule: 'R', key: { user: 'G' }, localDate: '2026-10-14', deadline: d1, timezone: 'UTC', was: 'late', now: 'missing' }]);
    const list = await store.ledger.occurrences({ from: '2026-10-14', to: '2026-10-15', limit: 10, offset: 0 });
    expect(list.map((o) => [o.outcome, o.latenessSeconds, o.excuse?.reason ?? null])).toEqual([
      ['missing', null, 'holiday'],
      ['on_time', null, null],
    ]);
    const events = await store.ledger.excuseEvents({ from: 0, to: d2 + 10, limit: 10 });
    expect(events.items[0]).toMatchObject({ event: 'rejudged', by: 'bob', reason: 'upgrade', rule: 'R', detail: { from: '2026-10-14', to: '2026-10-15', judged: 2, changed: 1 } });
  });

  it('a whole day\'s excuse takes only the deadlines that were not on time, and answers which (11c)', async () => {
    const store = await backend.open();
    const morning = Date.UTC(2026, 9, 12, 8);
    const noon = Date.UTC(2026, 9, 12, 12);
    const afternoon = Date.UTC(2026, 9, 12, 14);
    await store.write([occurrence('F', morning, 'on_time', true), occurrence('F', noon, 'missing', true), occurrence('F', afternoon, 'late', true)]);
    const sla = slaHandlers(() => ({ ledger: store.ledger, objective: () => 0.99 }), () => Date.UTC(2026, 9, 13));
    const answer = await sla.excuse(post({ rule: 'R', key: { user: 'F' }, local_date: '2026-10-12', reason: 'bank strike', by: 'ana' }));
    expect(answer).toMatchObject({
      status: 'success',
      excused: [
        { deadline: '2026-10-12T12:00:00Z', outcome: 'missing' },
        { deadline: '2026-10-12T14:00:00Z', outcome: 'late' },
      ],
      not_excused: [{ deadline: '2026-10-12T08:00:00Z', outcome: 'on_time' }],
    });
    const list = await store.ledger.occurrences({ from: '2026-10-12', to: '2026-10-12', limit: 10, offset: 0 });
    expect(list.map((o) => [o.outcome, o.excuse?.reason ?? null])).toEqual([
      ['on_time', null],
      ['missing', 'bank strike'],
      ['late', 'bank strike'],
    ]);
    const [tally] = await store.ledger.tally({ from: '2026-10-12', to: '2026-10-12' });
    expect(tally).toMatchObject({ on_time: 1, late: 0, missing: 0, excused: 2 });
  });

  it('excuses one deadline of a day, never an on-time one, and keeps every excuse and withdrawal in the history', async () => {
    const store = await backend.open();
    const morning = Date.UTC(2026, 9, 8, 8);
    const afternoon = Date.UTC(2026, 9, 8, 14);
    await store.write([occurrence('E', morning, 'missing', true), occurrence('E', afternoon, 'on_time', true)]);
    const sla = slaHandlers(() => ({ ledger: store.ledger, objective: () => 0.99 }), () => Date.UTC(2026, 9, 9));
    const body = (deadline: number, reason = 'line down') => ({ rule: 'R', key: { user: 'E' }, local_date: '2026-10-08', deadline: new Date(deadline).toISOString(), reason, by: 'ana' });
    await expect(sla.excuse(post(body(afternoon)))).rejects.toMatchObject({ status: 409, code: 'sla_occurrence_on_time' });
    await expect(sla.excuse(post(body(morning)))).resolves.toMatchObject({ status: 'success', excuse: { deadline: new Date(morning).toISOString() } });
    // Only the morning's occurrence is excused: the afternoon's on-time one stays in the denominator.
    const list = await store.ledger.occurrences({ from: '2026-10-08', to: '2026-10-08', limit: 10, offset: 0 });
    expect(list.map((o) => [o.deadline, o.excuse?.by ?? null])).toEqual([
      [morning, 'ana'],
      [afternoon, null],
    ]);
    const [tally] = await store.ledger.tally({ from: '2026-10-08', to: '2026-10-08' });
    expect([tally?.on_time, tally?.missing, tally?.excused]).toEqual([1, 0, 1]);
    // Withdrawn by someone else; the trail says who did what.
    await expect(sla.withdraw(Object.assign(post({}), { method: 'DELETE', url: `/api/v1/sla/excuses?rule=R&local_date=2026-10-08&key=user%3DE&deadline=${encodeURIComponent(new Date(morning).toISOString())}&by=bo&reason=wrong%20day` }))).resolves.toEqual({ status: 'success' });
    const events = (await sla.events(Object.assign(post({}), { method: 'GET', url: '/api/v1/history/sla?rule=R' }))) as { events: Array<{ event: string; by: string; reason: string; deadline: string | null }> };
    expect(events.events.filter((e) => e.deadline === new Date(morning).toISOString()).map((e) => [e.event, e.by, e.reason])).toEqual([
      ['withdrawn', 'bo', 'wrong day'],
      ['excused', 'ana', 'line down'],
    ]);
  });
});
