import { describe, expect, it } from 'vitest';
import { discoverFlows, type DiscoverOptions } from '../../src/flows/discover-flows.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { compileMatch } from '../../src/rules/match.js';
import { successfulTransfer } from '../helpers/flow-transfer.js';

/**
 * Shapes a real estate has that discover dropped without a word (issue 52, contract 13a): a nightly batch on both
 * sides of midnight, a delivery in parts on some days, a partner whose names change case.
 */

const DAY = 86_400_000;
const MIN = 60_000;
// A Monday.
const START = Date.parse('2026-08-31T00:00:00Z');
const DAYS = 63;

function options(): DiscoverOptions {
  return { since: START, until: START + DAYS * DAY, timezone: 'UTC', minOccurrences: 8, calendars: [], rules: [], severalSources: false, transfersRead: 0 };
}

/** Monday to Friday. */
function weekday(d: number): boolean {
  return d % 7 < 5;
}

describe('a night flow', () => {
  it('is one daily flow with its deadline the next morning, on the weekday after each of its days', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < DAYS; d++) {
      if (!weekday(d)) continue;
      // 23:58 ± 5 min of each business day: on some days before midnight, on others after.
      const offset = ((d * 7) % 11) - 5;
      summaries.add(successfulTransfer(START + d * DAY + 23 * 60 * MIN + 58 * MIN + offset * MIN, 'NIGHTBANK', `BATCH_${d}.DAT`));
    }
    const r = discoverFlows(summaries.all(), options());
    expect(r.not_proposed).toEqual([]);
    expect(r.flows).toHaveLength(1);
    const f = r.flows[0];
    expect(f?.schedule.weekdays).toEqual([1, 2, 3, 4, 5]);
    expect(f?.missed).toBe(0);
    expect(f?.late).toBe(0);
    expect(f?.arrival.p50).toMatch(/^(23:5\d|00:0\d)$/);
    // Latest arrival 00:03 → deadline 00:15 (10 min after, rounded up to 5), Tuesday to Saturday.
    expect(f?.rule.deadline).toBe('15 0 * * 2-6');
    expect(f?.evidence).toMatch(/a night flow: its day runs from (\d\d):00 to \1:00 the next day, its deadline is the next morning/);
  });

  it('leaves a flow that keeps well clear of midnight on the calendar day', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < DAYS; d++) summaries.add(successfulTransfer(START + d * DAY + 23 * 60 * MIN + (d % 5) * MIN, 'LATEBANK', `EOD_${d}.DAT`));
    const f = discoverFlows(summaries.all(), options()).flows[0];
    expect(f?.rule.deadline).toBe('15 23 * * *');
    expect(f?.evidence).not.toMatch(/night/);
  });
});
