import { describe, expect, it } from 'vitest';
import { coverageText, monthsOf, reportCsv, reportRow } from '../../src/sla/sla-report.js';

const tally = { rule: 'R', key: { user: 'A' }, timezone: 'UTC', on_time: 2, late: 1, missing: 0, excused: 0, no_data: 0, latenessSeconds: [61.4, 3_600.6, 120] };

describe('an SLA report', () => {
  it('rounds its shares to 4 decimals and its lateness to whole seconds, with the mean, the worst and the p95', () => {
    const row = reportRow({ ...tally, on_time: 2, late: 1 }, 0.99);
    expect(row).toMatchObject({ on_time_ratio: 0.6667, objective: 0.99, lateness_p95_seconds: 3_601, lateness_mean_seconds: 1_261, lateness_max_seconds: 3_601 });
    expect(reportRow({ ...tally, late: 0, latenessSeconds: [] }, undefined)).toMatchObject({ lateness_mean_seconds: null, lateness_max_seconds: null, lateness_p95_seconds: null });
  });

  it('as CSV, starts each row with the period it covers and when the report was made', () => {
    const due = Array.from({ length: 22 }, (_, i) => `2026-10-${String(i + 1).padStart(2, '0')}`);
    const csv = reportCsv([{ ...reportRow({ ...tally, monitoredFrom: '2026-10-20' }, 0.99, due), period_from: '2026-10-01', period_to: '2026-10-31', month: '2026-10' }, reportRow(tally, undefined)], {
      from: '2026-10-01',
      to: '2026-11-30',
      createdAt: Date.parse('2026-12-01T09:00:00Z'),
    });
    const [header, month, whole] = csv.split('\r\n');
    expect(header).toBe(
      'period_from,period_to,created_at,rule,key,timezone,on_time,late,missing,excused,no_data,on_time_ratio,objective,budget_remaining,lateness_p95_seconds,lateness_mean_seconds,lateness_max_seconds,monitored_from,due,not_monitored,coverage',
    );
    // One late of three against 0.99: the budget (0.03 of a miss) is overspent 33 times over.
    // Monitored from the 20th: 19 of the 22 due deadlines were before it; 3 judged of 22 is a coverage of 0.1364.
    expect(month).toBe('2026-10-01,2026-10-31,2026-12-01T09:00:00.000Z,R,user=A,UTC,2,1,0,0,0,0.6667,0.99,-32.3333,3601,1261,3601,2026-10-20,22,19,0.1364');
    // A row without its own period is the report's.
    expect(whole?.startsWith('2026-10-01,2026-11-30,2026-12-01T09:00:00.000Z,R,')).toBe(true);
  });

  it('says how much of a period it covers, never a bare 100 % of a partly monitored month', () => {
    const row = reportRow({ ...tally, on_time: 2, late: 0, monitoredFrom: '2026-10-29' }, 0.99, ['2026-10-27', '2026-10-28', '2026-10-29', '2026-10-30']);
    expect([row.on_time_ratio, row.due, row.not_monitored, row.coverage]).toEqual([1, 4, 2, 0.5]);
    expect(coverageText(row)).toBe('partial: 2 of 4 due judged (monitored since 2026-10-29)');
    expect(coverageText(reportRow({ ...tally, monitoredFrom: '2026-10-01' }, 0.99, ['2026-10-01', '2026-10-02', '2026-10-05']))).toBe('3 of 3 due judged (monitored since 2026-10-01)');
    expect(coverageText(reportRow({ ...tally, on_time: 0, late: 0, monitoredFrom: null }, 0.99, ['2026-10-01']))).toBe('partial: 0 of 1 due judged (not monitored)');
  });

  it('splits a range of local dates into its months', () => {
    expect(monthsOf('2026-11-15', '2027-01-10')).toEqual([
      { month: '2026-11', from: '2026-11-15', to: '2026-11-30' },
      { month: '2026-12', from: '2026-12-01', to: '2026-12-31' },
      { month: '2027-01', from: '2027-01-01', to: '2027-01-10' },
    ]);
    expect(monthsOf('2028-02-01', '2028-02-29')).toEqual([{ month: '2028-02', from: '2028-02-01', to: '2028-02-29' }]);
  });
});
