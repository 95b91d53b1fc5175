import { afterAll, describe, expect, it } from 'vitest';
import { FlowRecorder } from '../../src/flows/flow-recorder.js';
import { flowDayRecord } from '../../src/flows/flow-day-record.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { transferOf } from '../../src/source/record.js';
import type { ServiceRecord, Transfer } from '../../src/source/transfer.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';

const DAY = 86_400_000;
const MONDAY = Date.parse('2026-11-02T10:00:00Z');

function transfer(file: string, at: number, result = 0): Transfer {
  const record: ServiceRecord = {
    DATAHORA: new Date(at).toISOString(), INSTANCE: 'PROD01', USUARIO: 'BANK1', CONEXAO: '', DATAARQUIVO: '', EVENTO: 7, HORAARQUIVO: '', MAXTAMREG: null,
    NUMREG: null, MENSAGEM: '', NOMEARQUIVO: file, TAGS: '', PROCID: null, REDE: '', RESULTADO: result, TAMARQUIVO: 1, THREADID: null, TIPOREC: '', DIAS: null,
  };
  return transferOf(record, undefined, 'mft');
}

describe.each(BACKENDS)('the flow summary in the history store (%s)', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('keeps each arrival once, whoever tells it and however often (live poll, backfill, a restart), and never a failure', async () => {
    const store = await backend.open();
    const live = new FlowRecorder();
    for (let d = 0; d < 3; d++) {
      const at = MONDAY + d * DAY;
      const name = `/in/BANK1/EXTRATO_202611${String(2 + d).padStart(2, '0')}.RET`;
      live.observe(transfer(name, at - 60_000, 21)); // a failed attempt first
      live.observe(transfer(name, at));
    }
    await store.write(live.take(MONDAY + 2 * DAY));
    // A restart re-reads the last day, and a backfill reads them all: the same transfers again.
    const again = new FlowRecorder();
    again.observe(transfer('/in/BANK1/EXTRATO_20261104.RET', MONDAY + 2 * DAY));
    again.observe(transfer('/in/BANK1/EXTRATO_20261105.RET', MONDAY + 3 * DAY));
    await store.write(again.take(MONDAY + 3 * DAY));
    const backfill = new FlowSummaries();
    for (let d = 0; d < 3; d++) backfill.add(transfer(`/in/BANK1/EXTRATO_202611${String(2 + d).padStart(2, '0')}.RET`, MONDAY + d * DAY));
    await store.write(backfill.all().flatMap((f) => [...f.days.values()].map((day) => flowDayRecord(f, day))));

    const { flows, unreadable } = await store.flows.summaries('2026-11-01');
    expect(unreadable).toBe(0);
    expect(flows).toHaveLength(1);
    const flow = flows[0];
    expect([...(flow?.days.values() ?? [])].map((d) => [d.day, d.count, d.arrivals])).toEqual([
      ['2026-11-02', 1, [MONDAY]],
      ['2026-11-03', 1, [MONDAY + DAY]],
      ['2026-11-04', 1, [MONDAY + 2 * DAY]],
      ['2026-11-05', 1, [MONDAY + 3 * DAY]],
    ]);
    // The date in the name varied: the pattern writes it as *.
    expect(flow?.runs.map((r) => r.varies)).toEqual([false, true]);

    // Retention takes whole days.
    await store.prune(MONDAY + 2 * DAY);
    const kept = await store.flows.summaries('2026-01-01');
    expect([...(kept.flows[0]?.days.keys() ?? [])]).toEqual(['2026-11-04', '2026-11-05']);
  });
});
