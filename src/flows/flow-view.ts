import type { RuleDefinition } from '../rules/registry.js';
import type { CalendarConfig } from '../sla/business-calendar.js';
import type { Clock } from '../util/clock.js';
import { TimeSlice, type EventLoopShare } from '../util/time-slice.js';
import { calendarCandidates } from './calendar-candidates.js';
import { discoverFlows, type DiscoverReport } from './discover-flows.js';
import { HolidayCalendars } from './holiday-calendars.js';
import { candidateZones } from './steadiest-zone.js';
import { filesOf, utcDay, type FlowSummary } from './flow-summary.js';

/** The period the daemon's picture covers (discover's default `--since`). */
export const FLOW_PERIOD_MS = 60 * 86_400_000;
/** A report is computed at most this often, whoever asks (the page, the API, the metric); a backfill shows within it. */
const REPORT_TTL_MS = 15_000;
/** A flow is recurring from this many scheduled periods (discover's default `--min-occurrences`). */
const MIN_OCCURRENCES = 8;

/** What of the config the report depends on (read at each computation: a reload changes it). */
export interface FlowViewSettings {
  timezone: string;
  calendars: Readonly<Record<string, CalendarConfig>>;
  severalSources: boolean;
}

export interface FlowViewOptions {
  /** The flow summary's days from a UTC day on (the history store's `flows.summaries`). */
  read: (fromDay: string) => Promise<{ flows: FlowSummary[] }>;
  settings: () => FlowViewSettings;
  rules: () => readonly RuleDefinition[];
  clock: Clock;
  /** The report's counts, for `transfer_watch_flows{watched}`. */
  onReport?: (watched: number, unwatched: number, stopped: number) => void;
  /** The process's shared event loop: the holiday library's calendars are made in its slices. */
  loop?: EventLoopShare;
}

/**
 * What `/api/v1/flows`, `/api/v1/flows/proposal` and `/flows` show (contract section 13): `discover`'s report from
 * the flow summary in the history store instead of a read of the service. Every replica reads the same store, so
 * every replica answers the same; one computation serves the requests of 15 seconds.
 */
export class FlowView {
  private cached: { at: number; report: Promise<DiscoverReport> } | undefined;
  /**
   * The holiday library's calendars, made once and kept (every report asks the same ones); made in slices of the
   * event loop the first time a flow's skipped days ask for them (see `compute`).
   */
  private readonly holidays = new HolidayCalendars(undefined, true);

  constructor(private readonly o: FlowViewOptions) {}

  report(): Promise<DiscoverReport> {
    const now = this.o.clock.now();
    if (this.cached && now - this.cached.at < REPORT_TTL_MS) return this.cached.report;
    const report = this.compute(now);
    this.cached = { at: now, report };
    // A failed read is not kept: the next request asks the database again.
    report.catch(() => {
      if (this.cached?.report === report) this.cached = undefined;
    });
    return report;
  }

  private async compute(now: number): Promise<DiscoverReport> {
    const since = now - FLOW_PERIOD_MS;
    const { flows } = await this.o.read(utcDay(since));
    const transfers = flows.reduce((n, f) => n + filesOf(f), 0);
    let report = this.discover(flows, since, now, transfers);
    // A flow skipped days no configured calendar explains, and the library's calendars they ask for are not made
    // yet: made now, in slices of the event loop, and the report made again with them (once in a process's life).
    // (Two rounds: a country's regions are asked for once its own calendar explains a skipped day.)
    for (let pass = 0; pass < 3 && this.holidays.pending; pass++) {
      await this.holidays.prepare(new TimeSlice(this.o.loop, 1));
      report = this.discover(flows, since, now, transfers);
    }
    const watched = report.flows.filter((f) => f.watched_by.length > 0).length;
    this.o.onReport?.(watched, report.flows.length - watched, report.changes.filter((c) => c.change === 'stopped').length);
    return report;
  }

  private discover(flows: FlowSummary[], since: number, now: number, transfers: number): DiscoverReport {
    const settings = this.o.settings();
    return discoverFlows(flows, {
      since,
      until: now,
      timezone: settings.timezone,
      zones: candidateZones(this.o.rules()),
      minOccurrences: MIN_OCCURRENCES,
      calendars: calendarCandidates(settings.calendars),
      holidays: this.holidays,
      rules: this.o.rules(),
      severalSources: settings.severalSources,
      transfersRead: transfers,
    });
  }
}
