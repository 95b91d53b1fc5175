import { afterAll, describe, expect, it } from 'vitest';
import type { AlertEventRecord, AttemptRecord, SilenceEventRecord } from '../../src/history/history-records.js';
import { MAX_SCANNED_ROWS, type HistoryStore } from '../../src/history/history-store.js';
import { parseMatchers } from '../../src/notify/matcher.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';

const H = 3_600_000;

function alertEvent(i: number, alertname: string, user: string, event: AlertEventRecord['event'] = 'firing'): AlertEventRecord {
  return {
    kind: 'alert',
    id: `fp-${alertname}-${user}:${event}:${i}`,
    at: i * 1_000,
    event,
    fingerprint: `fp-${alertname}-${user}`,
    labels: { alertname, user, severity: 'critical' },
    annotations: { summary: `<b>${user}</b>` },
    silence_id: null,
    inhibited_by: null,
  };
}

function attempt(i: number, receiver: string, fingerprints: string[], outcome: AttemptRecord['outcome'] = 'sent'): AttemptRecord {
  return {
    kind: 'attempt',
    id: `key-${i}:1`,
    at: i * 1_000,
    receiver,
    integration: 'webhook',
    status: 'firing',
    fingerprints,
    alerts: fingerprints.map((fp) => ({ alertname: 'TransferErrorBurst', fp })),
    title: `[FIRING:1] TransferErrorBurst ${i}`,
    outcome,
    attempt: 1,
    error: outcome === 'sent' ? null : 'HTTP 500',
    duration_ms: 12,
  };
}

describe.each(BACKENDS)('HistoryStore on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  const all = { matchers: [], from: 0, to: Number.MAX_SAFE_INTEGER, limit: 1_000 };

  it('keeps a record written twice once (ids), and reads back exactly what was written', async () => {
    const store = await backend.open();
    const e = alertEvent(5, 'TransferErrorBurst', 'BANK1');
    await store.write([e]);
    await store.write([e, alertEvent(6, 'TransferErrorBurst', 'BANK1', 'resolved')]);
    const page = await store.alertEvents(all);
    expect(page.items).toEqual([alertEvent(6, 'TransferErrorBurst', 'BANK1', 'resolved'), e]);
    expect(page.next).toBeNull();
  });

  it('lists newest first, filters by matchers and time, and pages with a cursor without gaps or repeats', async () => {
    const store = await backend.open();
    const events = Array.from({ length: 250 }, (_, i) => alertEvent(i, i % 2 === 0 ? 'TransferErrorBurst' : 'ExpectedFileMissing', `BANK${i % 5}`));
    await store.write(events);
    const matchers = parseMatchers('alertname="TransferErrorBurst", user=~"BANK[02]"');
    const want = events
      .filter((e) => e.labels['alertname'] === 'TransferErrorBurst' && ['BANK0', 'BANK2'].includes(e.labels['user'] ?? '') && e.at >= 20_000 && e.at <= 200_000)
      .reverse();
    const got: AlertEventRecord[] = [];
    let cursor = undefined as undefined | { at: number; id: string };
    let pages = 0;
    do {
      const page = await store.alertEvents({ matchers, from: 20_000, to: 200_000, limit: 7, cursor });
      got.push(...page.items);
      cursor = page.next ?? undefined;
      pages++;
    } while (cursor && pages < 100);
    expect(got.map((e) => e.id)).toEqual(want.map((e) => e.id));
    expect(pages).toBe(Math.ceil(want.length / 7) + (want.length % 7 === 0 ? 1 : 0));
  });

  it('gives every attempt of one alert by fingerprint, and matches attempts by receiver and by their alerts\' labels', async () => {
    const store = await backend.open();
    await store.write([attempt(1, 'oncall', ['a', 'b']), attempt(2, 'oncall', ['b'], 'retrying'), attempt(3, 'treasury', ['c']), attempt(4, 'treasury', ['a'], 'gave_up')]);
    const ofA = await store.attempts({ ...all, fingerprint: 'a' });
    expect(ofA.items.map((a) => a.id)).toEqual(['key-4:1', 'key-1:1']);
    const treasury = await store.attempts({ ...all, matchers: parseMatchers('receiver="treasury"') });
    expect(treasury.items.map((a) => a.id)).toEqual(['key-4:1', 'key-3:1']);
    const failing = await store.attempts({ ...all, matchers: parseMatchers('outcome!="sent", fp="b"') });
    expect(failing.items.map((a) => a.id)).toEqual(['key-2:1']);
    // As written, and said to be about alerts (a scheduled SLA report's attempt says sla_report and its period).
    expect(failing.items[0]).toEqual({ ...attempt(2, 'oncall', ['b'], 'retrying'), about: 'alerts', period: null });
  });

  it('stops a page of a rare match after MAX_SCANNED_ROWS rows with a cursor to go on from', async () => {
    const store = await backend.open();
    const many = Array.from({ length: MAX_SCANNED_ROWS + 500 }, (_, i) => alertEvent(i + 10, 'Noise', 'X'));
    await store.write([alertEvent(1, 'Rare', 'BANK1'), ...many]);
    const first = await store.alertEvents({ ...all, matchers: parseMatchers('user="BANK1"'), limit: 10 });
    expect(first.items).toEqual([]);
    expect(first.next).not.toBeNull();
    const second = await store.alertEvents({ ...all, matchers: parseMatchers('user="BANK1"'), limit: 10, cursor: first.next ?? undefined });
    expect(second.items.map((e) => e.labels['alertname'])).toEqual(['Rare']);
    expect(second.next).toBeNull();
  });

  it('deletes what is older than the retention, attempts\' alert links included', async () => {
    const store = await backend.open();
    const silence: SilenceEventRecord = {
      kind: 'silence',
      id: 's1:created',
      at: 1 * H,
      event: 'created',
      silence_id: 's1',
      matchers: [{ name: 'user', value: 'BANK1', isRegex: false, isEqual: true }],
      created_by: 'ana',
      comment: 'maintenance',
      starts_at: H,
      ends_at: 2 * H,
    };
    await store.write([alertEvent(1, 'A', 'U'), { ...alertEvent(2, 'A', 'U'), at: 5 * H }, { ...attempt(1, 'r', ['x']), at: 1 * H }, { ...attempt(2, 'r', ['x']), at: 5 * H }, silence]);
    // The old alert event, the old attempt and its link to alert x, the silence event.
    expect(await store.prune(3 * H)).toBe(4);
    expect((await store.alertEvents(all)).items).toHaveLength(1);
    expect((await store.attempts({ ...all, fingerprint: 'x' })).items.map((a) => a.id)).toEqual(['key-2:1']);
    expect((await store.silenceEvents(all)).items).toEqual([]);
  });
});

export type { HistoryStore };
