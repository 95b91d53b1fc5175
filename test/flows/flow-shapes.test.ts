import { describe, expect, it } from 'vitest';
import { discoverFlows, type DiscoverOptions } from '../../src/flows/discover-flows.js';
import { partMarker } from '../../src/flows/flow-families.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { nameShape, newRunSummaries } from '../../src/flows/name-shape.js';
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

  it('leaves a morning flow with one file just before midnight and one just after on the calendar day', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < DAYS; d++) {
      // 08:00 ± 4 min, but one day at 23:40 (late) and another at 00:20 (early).
      const minute = d === 10 ? 23 * 60 + 40 : d === 20 ? 20 : 8 * 60 + (d % 9) - 4;
      summaries.add(successfulTransfer(START + d * DAY + minute * MIN, 'MORNINGBANK', `MOV_${d}.DAT`));
    }
    const f = discoverFlows(summaries.all(), options()).flows[0];
    expect(f?.schedule.weekdays).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(f?.rule.deadline).toBe('15 8 * * *');
    expect(f?.evidence).not.toMatch(/night/);
  });

  it('leaves a flow that keeps well clear of midnight on the calendar day', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < DAYS; d++) summaries.add(successfulTransfer(START + d * DAY + 23 * 60 * MIN + (d % 5) * MIN, 'LATEBANK', `EOD_${d}.DAT`));
    const f = discoverFlows(summaries.all(), options()).flows[0];
    expect(f?.rule.deadline).toBe('15 23 * * *');
    expect(f?.evidence).not.toMatch(/night/);
  });
});

describe('a delivery in parts', () => {
  it('split into _1of2/_2of2 on a fifth of the days is one flow, counted once a day, with a pattern that takes every part', () => {
    const summaries = new FlowSummaries();
    const files: string[] = [];
    for (let d = 0; d < DAYS; d++) {
      const at = START + d * DAY + 6 * 60 * MIN + (d % 7) * MIN;
      const date = new Date(START + d * DAY).toISOString().slice(0, 10).replace(/-/g, '');
      const day = d % 5 === 0 ? [`POSICAO_${date}_1of2.TXT`, `POSICAO_${date}_2of2.TXT`] : [`POSICAO_${date}.TXT`];
      day.forEach((file, i) => {
        files.push(file);
        summaries.add(successfulTransfer(at + i * 4 * MIN, 'PARTBANK', file));
      });
    }
    const r = discoverFlows(summaries.all(), options());
    expect(r.not_proposed).toEqual([]);
    expect(r.flows).toHaveLength(1);
    const f = r.flows[0];
    expect(f).toMatchObject({ occurrences: DAYS, missed: 0, files: files.length, parts: { per_delivery: 2, also_whole: true } });
    expect(f?.rule.min_count).toBeUndefined();
    const matches = compileMatch({ file: f?.rule.match['file'] ?? [] });
    expect(files.filter((file) => !matches(successfulTransfer(0, 'PARTBANK', file)))).toEqual([]);
    expect(f?.evidence).toMatch(/in parts \(2 each time\), whole on other days: a delivery counts once, at its last part/);
  });

  it('always in three parts (_001of003 … _003of003) expects all three by a deadline after the last', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < DAYS; d++) {
      if (!weekday(d)) continue;
      for (let part = 1; part <= 3; part++) summaries.add(successfulTransfer(START + d * DAY + 8 * 60 * MIN + (part - 1) * 5 * MIN + (d % 3) * MIN, 'TRIBANK', `CNAB_${d}_${String(part).padStart(3, '0')}of003.REM`));
    }
    const f = discoverFlows(summaries.all(), options()).flows[0];
    expect(f).toMatchObject({ parts: { per_delivery: 3, also_whole: false }, rule: { min_count: 3 } });
    // The last part at 08:10–08:12: the deadline after it, not after the first.
    expect(f?.arrival.max).toBe('08:12');
    expect(f?.rule.deadline).toBe('25 8 * * 1-5');
  });
});

describe('part markers', () => {
  it('are found in the forms partners write them, and not in numbers that are no part', () => {
    const marker = (file: string): string | undefined => {
      const shape = nameShape(file);
      const m = partMarker(shape.pieces, newRunSummaries(shape.values));
      return m ? `${m.tail}:${m.runs.join(',')}` : undefined;
    };
    expect(marker('POS_20261201_1of2.TXT')).toBe('1:1,2');
    expect(marker('POS_20261201-002OF003.TXT')).toBe('1:1,2');
    expect(marker('POS 20261201 part 1 of 2.TXT')).toBe('6:1,2');
    expect(marker('POS_20261201.TXT.part2')).toBe('5:1');
    expect(marker('POS_20261201_pt_3.csv')).toBe('4:1');
    expect(marker('POS_20261201.TXT')).toBeUndefined();
    expect(marker('V2_OFFER_1.TXT')).toBeUndefined();
    expect(marker('PARTNER_20261201.TXT')).toBeUndefined();
  });
});

describe('names that change case', () => {
  it('are one flow with a pattern per casing', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < DAYS; d++) {
      const name = d < 30 ? `extrato_${d}.ret` : `EXTRATO_${d}.RET`;
      summaries.add(successfulTransfer(START + d * DAY + 7 * 60 * MIN + (d % 4) * MIN, 'CASEBANK', name));
    }
    const r = discoverFlows(summaries.all(), options());
    expect(r.flows).toHaveLength(1);
    expect(r.flows[0]).toMatchObject({ occurrences: DAYS, missed: 0, patterns: ['EXTRATO_*.RET', 'extrato_*.ret'] });
    expect(r.flows[0]?.rule.match['file']).toEqual(['EXTRATO_*.RET', 'extrato_*.ret']);
    expect(r.flows[0]?.evidence).toMatch(/its names change case: 2 patterns/);
  });
});

