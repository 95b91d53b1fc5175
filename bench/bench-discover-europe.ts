import { calendarCandidates } from '../src/flows/calendar-candidates.js';
import { discoverFlows, type FlowReport } from '../src/flows/discover-flows.js';
import { FlowSummaries } from '../src/flows/flow-summary.js';
import { HolidayCalendars } from '../src/flows/holiday-calendars.js';
import { EUROPE_CALENDARS, EUROPE_DAYS, EUROPE_SINCE, EUROPE_ZONE, europeEstate, europeTransfers, type EuropeTruth } from './europe-estate.js';

/**
 * The discover line's second estate (issue 52): Europe's clocks and holidays, parts, nights, casings, stopped and
 * started flows (europe-estate.ts). A flow is found right when its pattern, zone, weekdays and calendar are the
 * truth's; precision is of the flows proposed, recall of those the truth expects proposed.
 */

export interface DiscoverEuropeResult {
  flows: number;
  transfers: number;
  expected: number;
  proposed: number;
  right: number;
  precision: number;
  recall: number;
  stopped: { truth: number; said: number };
  started: { truth: number; said: number };
  /** What was wrong, per kind, for the table's note. */
  wrong: string[];
  analyseMs: number;
}

function rightFor(t: EuropeTruth, f: FlowReport): string | undefined {
  if (!f.patterns.includes(t.flow.pattern)) return `pattern ${f.patterns.join('|')}`;
  if (f.timezone !== t.timezone) return `zone ${f.timezone}`;
  if (JSON.stringify(f.schedule.weekdays) !== JSON.stringify(t.weekdays)) return `weekdays ${f.schedule.weekdays.join('')}`;
  if (f.schedule.calendar !== t.calendar) return `calendar ${f.schedule.calendar ?? 'none'}`;
  return undefined;
}

export function measureDiscoverEurope(per: number): DiscoverEuropeResult {
  const truths = europeEstate(per);
  const transfers = europeTransfers(truths);
  const summaries = new FlowSummaries();
  for (const t of transfers) summaries.add(t);
  const started = performance.now();
  const report = discoverFlows(summaries.all(), {
    since: EUROPE_SINCE,
    until: EUROPE_SINCE + EUROPE_DAYS * 86_400_000,
    timezone: EUROPE_ZONE,
    zones: ['UTC', 'Europe/London'],
    minOccurrences: 8,
    calendars: calendarCandidates(EUROPE_CALENDARS),
    holidays: new HolidayCalendars(),
    rules: [],
    severalSources: false,
    transfersRead: transfers.length,
  });
  const analyseMs = performance.now() - started;
  const expected = truths.filter((t) => t.expect === 'proposed');
  let right = 0;
  const wrong = new Map<string, number>();
  const note = (kind: string, what: string): void => void wrong.set(`${kind}: ${what}`, (wrong.get(`${kind}: ${what}`) ?? 0) + 1);
  for (const t of expected) {
    const f = report.flows.find((x) => x.user === t.flow.user && x.event === t.flow.event);
    if (!f) {
      note(t.flow.kind, `not proposed (${report.not_proposed.find((n) => n.flow.startsWith(`eu/${t.flow.user} `))?.reason ?? 'not listed'})`);
      continue;
    }
    const why = rightFor(t, f);
    if (why) note(t.flow.kind, why);
    else right++;
  }
  for (const f of report.flows) if (!expected.some((t) => t.flow.user === f.user && t.flow.event === f.event)) note('extra', `${f.user} ${f.pattern}`);
  const saidStopped = new Set(report.changes.filter((c) => c.change === 'stopped').map((c) => c.flow.split(' ')[0]?.replace(/^eu\//, '')));
  const saidStarted = new Set(report.changes.filter((c) => c.change === 'started').map((c) => c.flow.split(' ')[0]?.replace(/^eu\//, '')));
  const stoppedTruth = truths.filter((t) => t.expect === 'stopped');
  const startedTruth = truths.filter((t) => t.flow.kind === 'started');
  return {
    flows: truths.length,
    transfers: transfers.length,
    expected: expected.length,
    proposed: report.flows.length,
    right,
    precision: report.flows.length === 0 ? 0 : right / report.flows.length,
    recall: expected.length === 0 ? 0 : right / expected.length,
    stopped: { truth: stoppedTruth.length, said: stoppedTruth.filter((t) => saidStopped.has(t.flow.user)).length },
    started: { truth: startedTruth.length, said: startedTruth.filter((t) => saidStarted.has(t.flow.user)).length },
    wrong: [...wrong].map(([what, n]) => `${n} × ${what}`),
    analyseMs,
  };
}
