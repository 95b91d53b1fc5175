import { TransferWatchError } from '../../util/errors.js';
import type { MuteTimeIntervalConfig, TimeIntervalConfig } from '../dispatch/route-schema.js';

/**
 * Named time intervals (Alertmanager's `mute_time_intervals` / `time_intervals`) for planned downtime.
 * Each field narrows the interval; an absent field means "any". All fields are evaluated in the
 * interval's `location`, so `times: 22:00-24:00` in America/Sao_Paulo follows that zone's clock.
 * `times` are [start, end) in minutes of the local day.
 */
export class TimeIntervalError extends TransferWatchError {
  constructor(message: string) {
    super('time_interval_invalid', message);
    this.name = 'TimeIntervalError';
  }
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

interface Range {
  start: number;
  end: number;
}

interface CompiledInterval {
  weekdays?: Range[];
  times?: Range[];
  daysOfMonth?: Range[];
  months?: Range[];
  years?: Range[];
  format: Intl.DateTimeFormat;
}

export class TimeIntervals {
  private readonly intervals = new Map<string, CompiledInterval[]>();

  /** Throws TimeIntervalError naming the interval when a field cannot be read. */
  constructor(configs: readonly MuteTimeIntervalConfig[]) {
    for (const config of configs) {
      if (this.intervals.has(config.name)) throw new TimeIntervalError(`duplicate time interval name "${config.name}"`);
      this.intervals.set(
        config.name,
        config.time_intervals.map((ti, i) => compile(ti, `mute_time_intervals "${config.name}" [${i}]`)),
      );
    }
  }

  names(): string[] {
    return [...this.intervals.keys()];
  }

  /** Whether the named interval contains the instant; an unknown name is never active. */
  contains(name: string, now: number): boolean {
    const list = this.intervals.get(name);
    return list !== undefined && list.some((ti) => intervalContains(ti, now));
  }
}

function compile(config: TimeIntervalConfig, where: string): CompiledInterval {
  const out: CompiledInterval = {
    format: new Intl.DateTimeFormat('en-US', {
      timeZone: config.location,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'long',
      hour: 'numeric',
      minute: 'numeric',
    }),
  };
  if (config.weekdays) out.weekdays = config.weekdays.map((w) => range(w, where, 'weekdays', (p) => named(p, WEEKDAYS, 0)));
  if (config.months) out.months = config.months.map((m) => range(m, where, 'months', (p) => named(p, MONTHS, 1) ?? int(p, 1, 12)));
  if (config.years) out.years = config.years.map((y) => range(y, where, 'years', (p) => int(p, 1970, 9999)));
  if (config.days_of_month) {
    out.daysOfMonth = config.days_of_month.map((d) =>
      range(d, where, 'days_of_month', (p) => {
        const n = int(p, -31, 31);
        return n === 0 ? undefined : n;
      }),
    );
  }
  if (config.times) {
    out.times = config.times.map((t) => {
      const start = minutes(t.start_time);
      const end = minutes(t.end_time);
      if (start > 24 * 60 - 1 || end <= start) {
        throw new TimeIntervalError(`${where}.times: start_time ${t.start_time} must be before end_time ${t.end_time}`);
      }
      return { start, end };
    });
  }
  return out;
}

function range(text: string, where: string, field: string, parse: (part: string) => number | undefined): Range {
  const parts = text.trim().toLowerCase().split(':');
  const start = parts[0] !== undefined ? parse(parts[0]) : undefined;
  const end = parts.length === 2 && parts[1] !== undefined ? parse(parts[1]) : parts.length === 1 ? start : undefined;
  if (start === undefined || end === undefined || parts.length > 2) {
    throw new TimeIntervalError(`${where}.${field}: cannot read "${text}"`);
  }
  // Day-of-month ranges may mix signs (`1:-1`); they are checked against the month's length at match time.
  if (field !== 'days_of_month' && end < start) throw new TimeIntervalError(`${where}.${field}: "${text}" ends before it starts`);
  return { start, end };
}

function named(part: string, names: readonly string[], offset: number): number | undefined {
  const i = names.indexOf(part);
  return i < 0 ? undefined : i + offset;
}

function int(part: string, min: number, max: number): number | undefined {
  if (!/^-?\d+$/.test(part)) return undefined;
  const n = Number(part);
  return n >= min && n <= max ? n : undefined;
}

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

function inRanges(ranges: readonly Range[] | undefined, value: number): boolean {
  return ranges === undefined || ranges.some((r) => value >= r.start && value <= r.end);
}

function intervalContains(ti: CompiledInterval, now: number): boolean {
  const parts: Record<string, string> = {};
  for (const p of ti.format.formatToParts(new Date(now))) parts[p.type] = p.value;
  const year = Number(parts.year);
  const month = Number(parts.month);
  const day = Number(parts.day);
  const weekday = WEEKDAYS.indexOf((parts.weekday ?? '').toLowerCase());
  const minuteOfDay = Number(parts.hour) * 60 + Number(parts.minute);
  if (!inRanges(ti.weekdays, weekday)) return false;
  if (!inRanges(ti.months, month)) return false;
  if (!inRanges(ti.years, year)) return false;
  if (ti.times && !ti.times.some((r) => minuteOfDay >= r.start && minuteOfDay < r.end)) return false;
  if (ti.daysOfMonth) {
    const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
    const resolve = (d: number) => (d < 0 ? daysInMonth + d + 1 : d);
    if (!ti.daysOfMonth.some((r) => day >= resolve(r.start) && day <= resolve(r.end))) return false;
  }
  return true;
}
