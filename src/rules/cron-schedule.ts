import { Cron } from 'croner';
import { indexAfter } from '../util/sorted-numbers.js';

/** How many runs to step through one at a time before jumping straight to a far-away reference instead. */
const MAX_STEPS = 16;
/** Runs remembered per schedule; the oldest half is dropped past this (queries move forward with time). */
const MAX_REMEMBERED = 64;

/**
 * The runs of one cron pattern in one time zone, computed by croner and remembered. croner builds a new
 * `Intl.DateTimeFormat` (several, in fact) for every zoned `nextRun`/`previousRuns` call: about a millisecond
 * of CPU and native memory that outlives the call in the allocator. Deadline rules ask for the runs around
 * "now" at every evaluation, and many rules share a pattern, so each run is computed once here and then looked up.
 *
 * `runs` holds every run in [from, to], in order, with nothing missing between neighbours; `from` and `to` are
 * runs themselves (or ±Infinity where the pattern has no more runs), so lookups inside them are exact.
 */
export class CronSchedule {
  private readonly cron: Cron;
  private runs: number[] = [];
  private from = 0;
  private to = -1;

  constructor(pattern: string, timezone: string) {
    this.cron = new Cron(pattern, { timezone, paused: true });
  }

  /** The first run strictly after `t` (epoch ms), or undefined if the pattern never runs again. */
  after(t: number): number | undefined {
    this.cover(t);
    while (this.to <= t) if (!this.extendForward()) break;
    return this.runs[indexAfter(this.runs, t)];
  }

  /** The last run at or before `t` (epoch ms), or undefined if the pattern never ran before. */
  atOrBefore(t: number): number | undefined {
    this.cover(t);
    const i = indexAfter(this.runs, t);
    return i === 0 ? undefined : this.runs[i - 1];
  }

  /** Make [from, to] contain `t`: step to it when it is a few runs away, else start again around it. */
  private cover(t: number): void {
    if (this.runs.length > 0 || this.from <= this.to) {
      for (let i = 0; i < MAX_STEPS && t > this.to; i++) if (!this.extendForward()) return;
      for (let i = 0; i < MAX_STEPS && t < this.from; i++) if (!this.extendBackward()) return;
      if (this.from <= t && t <= this.to) return;
    }
    this.anchorAt(t);
  }

  /** Start again from the last run at or before `t` (croner's previous run is strictly before its reference, in whole seconds). */
  private anchorAt(t: number): void {
    const [prev] = this.cron.previousRuns(1, new Date(Math.floor(t / 1000) * 1000 + 1000));
    if (prev) {
      const at = prev.getTime();
      this.runs = [at];
      this.from = at;
      this.to = at;
    } else {
      // No run at or before t: everything before is known to be empty.
      this.runs = [];
      this.from = -Infinity;
      this.to = t;
    }
  }

  private extendForward(): boolean {
    if (this.to === Infinity) return false;
    const next = this.cron.nextRun(new Date(this.to));
    if (!next) {
      this.to = Infinity;
      return false;
    }
    this.runs.push(next.getTime());
    this.to = next.getTime();
    if (this.runs.length > MAX_REMEMBERED) {
      this.runs = this.runs.slice(MAX_REMEMBERED / 2);
      this.from = this.runs[0] as number;
    }
    return true;
  }

  private extendBackward(): boolean {
    if (this.from === -Infinity) return false;
    const [prev] = this.cron.previousRuns(1, new Date(this.from));
    if (!prev) {
      this.from = -Infinity;
      return false;
    }
    this.runs.unshift(prev.getTime());
    this.from = prev.getTime();
    if (this.runs.length > MAX_REMEMBERED) {
      this.runs = this.runs.slice(0, MAX_REMEMBERED / 2);
      this.to = this.runs.at(-1) as number;
    }
    return true;
  }
}

/** One CronSchedule per (pattern, zone), shared by the rules of one engine: rule sets often repeat a deadline. */
export class CronSchedules {
  private readonly schedules = new Map<string, CronSchedule>();

  get(pattern: string, timezone: string): CronSchedule {
    const key = `${timezone}\u0000${pattern}`;
    let schedule = this.schedules.get(key);
    if (!schedule) this.schedules.set(key, (schedule = new CronSchedule(pattern, timezone)));
    return schedule;
  }
}
