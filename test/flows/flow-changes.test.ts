import { describe, expect, it } from 'vitest';
import { discoverFlows } from '../../src/flows/discover-flows.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { successfulTransfer } from '../helpers/flow-transfer.js';

/**
 * Changes are shown, not dropped (contract 13a): a flow regular for weeks and silent for its last periods is
 * *stopped* (first in `changes`, never proposed, in `not_proposed` with why); a flow that began within the period is
 * *started*; a flow that looks recurring but is not proposed says why.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.parse('2026-09-01T00:00:00Z');
const DAYS = 70;

function report() {
  const summaries = new FlowSummaries();
  for (let d = 0; d < DAYS; d++) {
    const at = START + d * DAY;
    // Every day at 07:xx for ten weeks less its last 21 days: stopped.
    if (d < DAYS - 21) summaries.add(successfulTransfer(at + 7 * HOUR + (d % 7) * 60_000, 'BANK1', `STMT_${d}.RET`));
    // Every day at 09:xx from day 30: started.
    if (d >= 30) summaries.add(successfulTransfer(at + 9 * HOUR + (d % 5) * 60_000, 'BANK2', `POS_${d}.CSV`));
    // Every day at 11:xx, all along: neither.
    summaries.add(successfulTransfer(at + 11 * HOUR + (d % 3) * 60_000, 'BANK3', `ORD_${d}.XML`));
    // Every third day at a random-looking hour: looks recurring, is not proposed.
    if (d % 3 === 0) summaries.add(successfulTransfer(at + ((d * 7) % 24) * HOUR, 'BANK4', `ADHOC_${d}.TXT`));
  }
  return discoverFlows(summaries.all(), { since: START, until: START + DAYS * DAY, timezone: 'UTC', minOccurrences: 8, calendars: [], rules: [], severalSources: false, transfersRead: 0 });
}

describe('changes of the flows in the period', () => {
  it('names the flow that stopped first, since its last file, and proposes no rule for it', () => {
    const r = report();
    expect(r.changes.map((c) => [c.flow, c.change, c.since])).toEqual([
      ['mft/BANK1 reception STMT_*.RET', 'stopped', new Date(START + (DAYS - 22) * DAY + 7 * HOUR + ((DAYS - 22) % 7) * 60_000).toISOString()],
      ['mft/BANK2 reception POS_*.CSV', 'started', new Date(START + 30 * DAY + 9 * HOUR).toISOString()],
    ]);
    expect(r.changes[0]?.detail).toMatch(/then none in 2[01] scheduled periods$/);
    expect(r.flows.map((f) => f.user).sort()).toEqual(['BANK2', 'BANK3']);
    expect(r.not_proposed.find((n) => n.flow.startsWith('mft/BANK1'))).toMatchObject({ reason: 'stopped' });
  });

  it('says why a flow seen on many days was not proposed', () => {
    const r = report();
    const adhoc = r.not_proposed.find((n) => n.flow.startsWith('mft/BANK4'));
    expect(adhoc?.reason).toMatch(/^(irregular_days|spread_arrivals|too_few_periods|irregular_count)$/);
    expect(adhoc?.detail.length).toBeGreaterThan(0);
  });
});
