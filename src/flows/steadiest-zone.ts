import { zoneOffsetMs } from '../util/zoned-time.js';
import type { FlowDay } from './flow-summary.js';
import { learnSchedule, type ScheduleFinding, type ScheduleOptions } from './flow-schedule.js';

/**
 * Each flow its own clock (contract 13a): a flow's schedule is learned in the zone where its arrivals are steadiest.
 * A partner that sends at 05:30 UTC every day arrives at 06:30 and then 07:30 in Berlin across a DST change; a
 * deadline proposed in Berlin either comes before half its files or an hour after them, and the next change breaks
 * it again. In UTC its arrivals are one time, and so is its deadline.
 */

/** A zone must make the arrivals at least this much steadier (mean minutes) to be proposed over the default. */
const MIN_GAIN_MINUTES = 3;
/** ... and at most this share of the default zone's spread. */
const MAX_SHARE = 0.5;
const DAY_MS = 86_400_000;

export interface ZonedFinding {
  finding: ScheduleFinding;
  /** The zone the finding was learned in. */
  timezone: string;
  /** When another zone than the default was chosen: the default's spread it was compared with. */
  against?: { timezone: string; spreadMinutes: number };
}

export class SteadiestZone {
  /** Per zone: whether its clock moves against the default zone's within the period. */
  private readonly moves = new Map<string, boolean>();

  /**
   * @param zones the zones to try besides the default (`o.timezone`): UTC and the zones the config already uses.
   *   Only those whose offset from the default changes within the period can be steadier: the others keep the same
   *   clock an hour apart, and the default is kept.
   */
  constructor(
    private readonly o: ScheduleOptions,
    zones: readonly string[],
  ) {
    for (const zone of new Set(zones)) if (zone !== o.timezone) this.moves.set(zone, clockMoves(o.timezone, zone, o.since, o.until));
  }

  learn(days: readonly FlowDay[]): ZonedFinding {
    const primary = learnSchedule(days, this.o);
    let best: ZonedFinding = { finding: primary, timezone: this.o.timezone };
    for (const [zone, moves] of this.moves) {
      if (!moves) continue;
      const finding = learnSchedule(days, { ...this.o, timezone: zone });
      if (!finding.recurring) continue;
      const current = best.finding;
      const base = primary.recurring ? primary.schedule.spreadMinutes : Infinity;
      const steadier = !current.recurring || (finding.schedule.spreadMinutes + MIN_GAIN_MINUTES <= base && finding.schedule.spreadMinutes <= MAX_SHARE * base && finding.schedule.spreadMinutes < current.schedule.spreadMinutes);
      if (steadier) best = { finding, timezone: zone, against: { timezone: this.o.timezone, spreadMinutes: base } };
    }
    return best;
  }
}

/** Whether the offset between two zones differs on two days of [since, until] (a DST change of one, not the other). */
export function clockMoves(a: string, b: string, since: number, until: number): boolean {
  let first: number | undefined;
  for (let t = since; t <= until + DAY_MS; t += DAY_MS) {
    const at = Math.min(t, until);
    const diff = zoneOffsetMs(at, a) - zoneOffsetMs(at, b);
    if (first === undefined) first = diff;
    else if (diff !== first) return true;
    if (at === until) break;
  }
  return false;
}

/** The zones a flow's schedule may be learned in besides the default: UTC, and those the config's rules name. */
export function candidateZones(rules: ReadonlyArray<{ readonly timezone?: string | undefined }>): string[] {
  const zones = new Set(['UTC']);
  for (const r of rules) if (typeof r.timezone === 'string') zones.add(r.timezone);
  return [...zones];
}
