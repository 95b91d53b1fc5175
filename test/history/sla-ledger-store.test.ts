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
    expect(await store.ledger.withdraw('R', 'user=C', '2026-10-01')).toBe(true);
    expect(await store.ledger.withdraw('R', 'user=C', '2026-10-01')).toBe(false);
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
});
