import { describe, expect, it } from 'vitest';
import { firingsOf, oncallRows, percentile, spanText, type OncallEvent } from '../../src/history/oncall-report.js';

const M = 60_000;
const T0 = Date.parse('2026-12-01T00:00:00Z');

function e(fingerprint: string, minute: number, event: string, labels: Record<string, string>): OncallEvent {
  return { fingerprint, at: T0 + minute * M, event, labels };
}

describe('the on-call report (contract 14)', () => {
  const bank1 = { alertname: 'StatementMissing', user: 'BANK1' };
  const bank2 = { alertname: 'StatementMissing', user: 'BANK2' };
  const burst = { alertname: 'ErrorBurst', user: 'ACME' };
  const events: OncallEvent[] = [
    // BANK1 fires twice: acknowledged after 4 minutes and resolved after 30; then never acknowledged, resolved after 90.
    e('b1', 0, 'firing', bank1),
    e('b1', 4, 'acknowledged', bank1),
    e('b1', 6, 'acknowledged', bank1),
    e('b1', 30, 'resolved', bank1),
    e('b1', 100, 'firing', bank1),
    e('b1', 115, 'escalated', bank1),
    e('b1', 190, 'resolved', bank1),
    // BANK2: acknowledged after 10 minutes, still firing.
    e('b2', 5, 'firing', bank2),
    e('b2', 15, 'acknowledged', bank2),
    // ACME: fired before the span (not counted), resolved in it.
    e('a', -50, 'firing', burst),
    e('a', 20, 'resolved', burst),
  ];

  it('makes one firing of each firing event, with its first ack, an escalation and its resolution', () => {
    const firings = firingsOf([...events].reverse(), T0, T0 + 200 * M);
    expect(firings.map((f) => [f.fingerprint, (f.firedAt - T0) / M, f.ackAt === undefined ? null : (f.ackAt - T0) / M, f.resolvedAt === undefined ? null : (f.resolvedAt - T0) / M, f.escalated])).toEqual([
      ['b1', 0, 4, 30, false],
      ['b2', 5, 15, null, false],
      ['b1', 100, null, 190, true],
    ]);
  });

  it('groups by alert name, partner or receiver, with nearest-rank p50 and p95 in seconds', () => {
    const firings = firingsOf(events, T0, T0 + 200 * M);
    expect(oncallRows(firings, 'alertname')).toEqual([
      { group: 'StatementMissing', alerts: 3, acknowledged: 2, escalated: 1, mtta_seconds: { p50: 240, p95: 600 }, mttr_seconds: { p50: 1800, p95: 5400 } },
    ]);
    expect(oncallRows(firings, 'user').map((r) => [r.group, r.alerts, r.mtta_seconds.p50])).toEqual([
      ['BANK1', 2, 240],
      ['BANK2', 1, 600],
    ]);
    const byReceiver = oncallRows(firings, 'receiver', new Map([['b1', ['oncall', 'treasury']]]));
    expect(byReceiver.map((r) => [r.group, r.alerts])).toEqual([
      ['oncall', 2],
      ['treasury', 2],
      ['', 1],
    ]);
  });

  it('says nothing of what it has no figures for', () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
    expect([spanText(null), spanText(42), spanText(245), spanText(4_320), spanText(183_600)]).toEqual(['-', '42s', '4m 05s', '1h 12m', '2d 03h']);
  });
});
