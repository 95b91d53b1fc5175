import { describe, expect, it } from 'vitest';
import { discoverFlows, type DiscoverOptions } from '../../src/flows/discover-flows.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { successfulTransfer } from '../helpers/flow-transfer.js';

/**
 * Each flow its own clock (contract 13a): over a span with Europe's October DST change, a file sent at a fixed UTC
 * time is proposed in UTC, a file sent at a fixed Berlin time in Berlin, and the evidence says why.
 */

const DAY = 86_400_000;
const MIN = 60_000;
// 2026-10-25 01:00 UTC: Berlin goes from UTC+2 to UTC+1, London from UTC+1 to UTC+0.
const START = Date.parse('2026-09-20T00:00:00Z');
const DAYS = 60;

function options(timezone: string, zones?: string[]): DiscoverOptions {
  return { since: START, until: START + DAYS * DAY, timezone, ...(zones ? { zones } : {}), minOccurrences: 8, calendars: [], rules: [], severalSources: false, transfersRead: 0 };
}

/** Berlin's offset from UTC on that day, in ms. */
function berlinOffset(at: number): number {
  return at < Date.parse('2026-10-25T01:00:00Z') ? 2 * 3_600_000 : 3_600_000;
}

function estate(): FlowSummaries {
  const summaries = new FlowSummaries();
  for (let d = 0; d < DAYS; d++) {
    const midnight = START + d * DAY;
    const jitter = ((d * 7) % 5) * MIN;
    // 05:30 UTC, whatever Berlin's clock says.
    summaries.add(successfulTransfer(midnight + 5 * 60 * MIN + 30 * MIN + jitter, 'LONDONBANK', `GL_${d}.CSV`));
    // 07:00 in Berlin, whatever UTC says.
    summaries.add(successfulTransfer(midnight + 7 * 60 * MIN - berlinOffset(midnight) + jitter, 'BERLINBANK', `KONTO_${d}.XML`));
  }
  return summaries;
}

describe('each flow its own clock', () => {
  it('proposes UTC for a file sent at a fixed UTC time across a DST change, the default zone for a local one', () => {
    const r = discoverFlows(estate().all(), options('Europe/Berlin'));
    const london = r.flows.find((f) => f.user === 'LONDONBANK');
    const berlin = r.flows.find((f) => f.user === 'BERLINBANK');
    expect(london).toMatchObject({ timezone: 'UTC', late: 0, rule: { timezone: 'UTC', deadline: '45 5 * * *' } });
    expect(london?.arrival).toMatchObject({ p50: '05:32', max: '05:34' });
    expect(london?.evidence).toMatch(/clock UTC: its arrivals vary \d min on average there, \d\d min on average in Europe\/Berlin/);
    expect(berlin).toMatchObject({ timezone: 'Europe/Berlin', late: 0, rule: { timezone: 'Europe/Berlin', deadline: '15 7 * * *' } });
    expect(berlin?.evidence).not.toMatch(/clock/);
  });

  it('keeps the default zone where no candidate clock moves against it (Berlin and London change on the same day)', () => {
    const r = discoverFlows(estate().all(), options('Europe/Berlin', ['Europe/London', 'Europe/Paris']));
    expect(r.flows.map((f) => f.timezone)).toEqual(['Europe/Berlin', 'Europe/Berlin']);
    // In Berlin the UTC flow straddles an hour: its deadline is set after the later half, and nothing claims otherwise.
    expect(r.flows.find((f) => f.user === 'LONDONBANK')?.rule.deadline).toBe('45 7 * * *');
  });

  it('proposes the default zone from a UTC default when the flow keeps Berlin time', () => {
    const r = discoverFlows(estate().all(), options('UTC', ['Europe/Berlin']));
    expect(r.flows.find((f) => f.user === 'BERLINBANK')).toMatchObject({ timezone: 'Europe/Berlin', rule: { deadline: '15 7 * * *' } });
    expect(r.flows.find((f) => f.user === 'LONDONBANK')).toMatchObject({ timezone: 'UTC' });
  });
});
