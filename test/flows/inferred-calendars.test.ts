import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { discoverFlows, type DiscoverOptions } from '../../src/flows/discover-flows.js';
import { proposalYaml } from '../../src/flows/flow-report-format.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { HolidayCalendars } from '../../src/flows/holiday-calendars.js';
import { calendarsSchema } from '../../src/sla/business-calendar.js';
import { EventLoopShare, TimeSlice } from '../../src/util/time-slice.js';
import { successfulTransfer } from '../helpers/flow-transfer.js';

/**
 * Calendars inferred (contract 13a): where no configured calendar fits, the weekdays a business-day flow skipped are
 * matched against the holiday library's countries and regions; the proposal names the calendar, the YAML to add and
 * the days that decided it. On thin or ambiguous evidence, nothing is proposed.
 */

const DAY = 86_400_000;
const holidays = new HolidayCalendars();

function flow(from: string, days: number, skip: readonly string[], zone: string, calendars: HolidayCalendars = holidays): ReturnType<typeof discoverFlows> {
  const start = Date.parse(`${from}T00:00:00Z`);
  const summaries = new FlowSummaries();
  for (let d = 0; d < days; d++) {
    const at = start + d * DAY;
    const date = new Date(at).toISOString().slice(0, 10);
    const weekday = new Date(at).getUTCDay();
    if (weekday === 0 || weekday === 6 || skip.includes(date)) continue;
    summaries.add(successfulTransfer(at + 7 * 3_600_000 + (d % 6) * 60_000, 'PARTNER', `KONTO_${date}.XML`));
  }
  const o: DiscoverOptions = { since: start, until: start + days * DAY, timezone: zone, zones: [], minOccurrences: 8, calendars: [], holidays: calendars, rules: [], severalSources: false, transfersRead: 0 };
  return discoverFlows(summaries.all(), o);
}

describe('calendars inferred from the holiday library', () => {
  it('names Saxony for a flow that skipped German Unity Day, Reformation Day and Repentance Day, with the YAML to add', () => {
    const r = flow('2025-09-15', 75, ['2025-10-03', '2025-10-31', '2025-11-19'], 'Europe/Berlin');
    const f = r.flows[0];
    expect(f).toMatchObject({ missed: 0, schedule: { calendar: 'de_sn', weekdays: [1, 2, 3, 4, 5] } });
    expect(f?.calendar_to_add).toEqual({ name: 'de_sn', country: 'DE', region: 'SN', yaml: 'calendars: { de_sn: { holidays: { country: DE, region: SN } } }', days: ['2025-10-03', '2025-10-31', '2025-11-19'] });
    expect(r.calendars_to_add).toEqual([{ name: 'de_sn', country: 'DE', region: 'SN', yaml: 'calendars: { de_sn: { holidays: { country: DE, region: SN } } }', flows: 1 }]);
    expect(f?.rule.calendar).toBe('de_sn');
    // The YAML to add is a calendar the config takes as it is.
    const added = parse(r.calendars_to_add[0]?.yaml ?? '') as { calendars: unknown };
    expect(calendarsSchema.safeParse(added.calendars).success).toBe(true);
    const text = proposalYaml(r, { unwatchedOnly: true, by: 'test' });
    expect(text).toContain('#   calendars: { de_sn: { holidays: { country: DE, region: SN } } }    # 1 flow');
    expect(f?.evidence).toMatch(/not configured: the public holidays of DE-SN in the holiday library, on the days it skipped \(2025-10-03, 2025-10-31, 2025-11-19\)/);
  });

  it('deferring (the daemon’s): makes no calendar itself, then makes those asked for a turn of the event loop each, and answers as the CLI', async () => {
    const deferring = new HolidayCalendars(undefined, true);
    const args = ['2025-09-15', 75, ['2025-10-03', '2025-10-31', '2025-11-19'], 'Europe/Berlin'] as const;
    const first = flow(...args, deferring);
    expect(first.flows[0]?.schedule.calendar).toBeNull();
    expect(deferring.pending).toBe(true);
    // A clock that moves 1 ms a look, a budget of 1 ms: every slice is spent after one calendar.
    let ms = 0;
    let turns = 0;
    const share = new EventLoopShare(1, () => ms++, (fn) => void setImmediate(() => (turns++, fn())));
    // As the daemon's flow view: make what the report asked for, make the report again, until it asks for nothing.
    let report = first;
    let rounds = 0;
    for (; deferring.pending && rounds < 5; rounds++) {
      await deferring.prepare(new TimeSlice(share, 1));
      report = flow(...args, deferring);
    }
    // Every country's calendar, then the regions of those that explain a skipped day: two rounds.
    expect(rounds).toBe(2);
    expect(turns).toBeGreaterThan(100);
    expect(report).toEqual(flow(...args));
    expect(report.flows[0]?.schedule.calendar).toBe('de_sn');
  });

  it('proposes nothing on one skipped holiday (a UK flow that happened to miss Saxony’s Repentance Day)', () => {
    const r = flow('2025-09-15', 75, ['2025-11-19'], 'Europe/London');
    expect(r.flows[0]?.schedule.calendar).toBeNull();
    expect(r.calendars_to_add).toEqual([]);
  });

  it('takes, among countries whose holidays fit alike, the one keeping the flow’s clock; with none, names them and proposes none', () => {
    const skip = ['2025-12-25', '2025-12-26', '2026-01-01'];
    const london = flow('2025-11-17', 70, skip, 'Europe/London');
    expect(london.flows[0]?.schedule.calendar).toBe('gb');
    expect(london.flows[0]?.calendar_to_add?.yaml).toBe('calendars: { gb: { holidays: { country: GB } } }');
    const utc = flow('2025-11-17', 70, skip, 'UTC');
    expect(utc.flows[0]?.schedule.calendar).toBeNull();
    expect(utc.flows[0]?.evidence).toMatch(/the days it skipped are public holidays of .*\bde\b.*\bgb\b.* alike: no calendar proposed/);
  });
});
