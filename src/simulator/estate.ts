import { BusinessCalendar } from '../sla/business-calendar.js';
import { hash32, hashUnit } from './random.js';
import type { StoredRecord } from './generator.js';

/**
 * An estate of scheduled flows on top of the generated traffic, for `discover`, `/flows` and their tests and bench:
 * statements and remittances on Brazil's business days, files twice a day, weekly files, every-day feeds,
 * month-end files and ad-hoc noise, with failed attempts before some arrivals, a late outlier a month and now and
 * then a missed day. Every arrival is a pure function of (seed, flow, day), and the estate writes its own truth.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The estate's local time is America/Sao_Paulo: UTC−3, without DST since 2019. */
const OFFSET_MS = -3 * 3_600_000;
export const ESTATE_TIMEZONE = 'America/Sao_Paulo';
/** The calendar of the business-day flows: Brazil's national public holidays, weekends off. */
export const ESTATE_CALENDAR = { holidays: { country: 'BR', types: ['public' as const] }, exclude_dates: [], exclude_weekdays: ['sat' as const, 'sun' as const] };
export const ESTATE_CALENDAR_NAME = 'BR';

export type EstateKind = 'business' | 'twice' | 'weekly' | 'daily' | 'month_end' | 'adhoc';

export interface EstateFlow {
  user: string;
  event: 5 | 7;
  instance: string;
  kind: EstateKind;
  /** Weekly: the ISO weekday. */
  weekday?: number;
  /** Mean arrival, minutes of the local day, one per daily arrival. */
  means: number[];
  /** Standard deviation of the arrival, minutes. */
  sigma: number;
  /** Name template: {user} {yyyymmdd} {ddmmyyyy} {yyyy} {mm} {dd} {yyyymm} {hhmmss} {n} {seq} {id}. */
  template: string;
  /** The glob the flow's files match (the truth's pattern). */
  pattern: string;
}

/** The truth of one flow, as `--truth` writes it. */
export interface EstateTruth {
  user: string;
  event: 'transmission' | 'reception';
  pattern: string;
  /** `weekdays`: the traffic's own daily statements (Monday to Friday, holidays included). */
  kind: EstateKind | 'weekdays';
  recurring: boolean;
  weekdays: number[];
  calendar: string | null;
  /** Per daily arrival: its mean and the p95 and p99 of its distribution (late outliers aside), `HH:MM`. */
  arrivals: Array<{ mean: string; p95: string; p99: string }>;
}

interface Template {
  kind: EstateKind;
  event: 5 | 7;
  template: string;
  pattern: string;
}

const TEMPLATES: readonly Template[] = [
  { kind: 'business', event: 7, template: '/in/{user}/EXTRATO_{yyyymmdd}.RET', pattern: '/in/{user}/EXTRATO_*.RET' },
  { kind: 'business', event: 5, template: '/out/{user}/PAGFOR_{ddmmyyyy}_{seq}.REM', pattern: '/out/{user}/PAGFOR_*_*.REM' },
  { kind: 'business', event: 7, template: '/in/{user}/COBRANCA_{yyyymmdd}_{hhmmss}.RET', pattern: '/in/{user}/COBRANCA_*_*.RET' },
  { kind: 'twice', event: 7, template: '/in/{user}/POSICAO_{yyyymmdd}_{n}.TXT', pattern: '/in/{user}/POSICAO_*_*.TXT' },
  { kind: 'weekly', event: 7, template: '/in/{user}/SEMANAL_{yyyy}-{mm}-{dd}.csv', pattern: '/in/{user}/SEMANAL_*-*-*.csv' },
  { kind: 'daily', event: 7, template: '/in/{user}/FEED_{yyyymmdd}.xml', pattern: '/in/{user}/FEED_*.xml' },
  { kind: 'daily', event: 5, template: '/out/{user}/ESTOQUE_{yyyymmdd}_{hhmmss}.csv', pattern: '/out/{user}/ESTOQUE_*_*.csv' },
  { kind: 'month_end', event: 5, template: '/out/{user}/FECHAMENTO_{yyyymm}.TXT', pattern: '/out/{user}/FECHAMENTO_*.TXT' },
  { kind: 'adhoc', event: 7, template: '/in/{user}/AVULSO_{id}.pdf', pattern: '/in/{user}/AVULSO_*.pdf' },
];
/** Of every 20 flows: 8 business-day, 2 twice a day, 3 weekly, 3 every day, 2 month-end, 2 ad-hoc. */
const KIND_CYCLE: readonly EstateKind[] = ['business', 'business', 'daily', 'weekly', 'business', 'twice', 'business', 'adhoc', 'daily', 'business', 'weekly', 'month_end', 'business', 'twice', 'daily', 'business', 'weekly', 'adhoc', 'business', 'month_end'];
const INSTANCES = ['PROD01', 'PROD02'];

/** A share of arrivals comes after a failed attempt of the same file a few minutes before. */
const FAILED_ATTEMPT_SHARE = 0.1;
/** A day's file is missing now and then. */
const MISSED_SHARE = 0.01;
const LATE_OUTLIER_MINUTES = 180;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** The flows of an estate of `size` flows: a pure function of (seed, size). */
export function estateFlows(seed: number, size: number): EstateFlow[] {
  const flows: EstateFlow[] = [];
  const perKind = new Map<EstateKind, number>();
  for (let i = 0; i < size; i++) {
    const kind = KIND_CYCLE[i % KIND_CYCLE.length] as EstateKind;
    const nth = perKind.get(kind) ?? 0;
    perKind.set(kind, nth + 1);
    const candidates = TEMPLATES.filter((t) => t.kind === kind);
    const template = candidates[nth % candidates.length] as Template;
    // Several partners share each shape, so flows of several users make one rule.
    const user = `${kind === 'business' ? 'BANCO' : kind === 'adhoc' ? 'AVULSO' : 'PARCEIRO'}${pad(Math.floor(nth / candidates.length) + 1 + (kind === 'business' ? 0 : perKindOffset(kind)), 3)}`;
    const h = hash32(seed, i, 0xe57a7e);
    const firstMean = 5 * 60 + (h % (11 * 60));
    const means = kind === 'twice' ? [7 * 60 + (h % 120), 14 * 60 + ((h >>> 8) % 120)] : [firstMean];
    flows.push({
      user,
      event: template.event,
      instance: INSTANCES[i % INSTANCES.length] as string,
      kind,
      ...(kind === 'weekly' ? { weekday: 1 + ((h >>> 4) % 5) } : {}),
      means,
      sigma: 6 + ((h >>> 12) % 20),
      template: template.template,
      pattern: template.pattern.replace('{user}', user),
    });
  }
  return flows;
}

/** Users of different kinds never share a name. */
function perKindOffset(kind: EstateKind): number {
  return { business: 0, twice: 100, weekly: 200, daily: 300, month_end: 400, adhoc: 500 }[kind];
}

/** A standard normal from two uniforms (Box–Muller), clipped at 3 sigma. */
function normal(u1: number, u2: number): number {
  const z = Math.sqrt(-2 * Math.log(Math.max(u1, 1e-12))) * Math.cos(2 * Math.PI * u2);
  return Math.max(-3, Math.min(3, z));
}

function hhmm(minutes: number): string {
  const m = Math.round(minutes);
  return `${pad(Math.floor(m / 60))}:${pad(m % 60)}`;
}

export function estateTruth(flows: readonly EstateFlow[]): EstateTruth[] {
  return flows.map((f) => ({
    user: f.user,
    event: f.event === 5 ? 'transmission' : 'reception',
    pattern: f.pattern,
    kind: f.kind,
    recurring: f.kind !== 'adhoc' && f.kind !== 'month_end',
    weekdays: f.kind === 'weekly' ? [f.weekday as number] : f.kind === 'daily' ? [1, 2, 3, 4, 5, 6, 7] : f.kind === 'adhoc' || f.kind === 'month_end' ? [] : [1, 2, 3, 4, 5],
    calendar: f.kind === 'business' || f.kind === 'twice' ? ESTATE_CALENDAR_NAME : null,
    arrivals: f.means.map((m) => ({ mean: hhmm(m), p95: hhmm(m + 1.645 * f.sigma), p99: hhmm(m + 2.326 * f.sigma) })),
  }));
}

/** A draft record of the estate: the generator fills in what every record has. */
export interface EstateArrival {
  time: number;
  flow: EstateFlow;
  file: string;
  /** A failed attempt (the file is sent again a few minutes later). */
  failed: boolean;
}

/**
 * The arrivals of the estate on one local day (days since 1970-01-01 in local time), computed once per day: the
 * generator asks per minute, and keeps the last days.
 */
export class Estate {
  private readonly calendar = new BusinessCalendar(ESTATE_CALENDAR);
  private readonly days = new Map<number, Map<number, EstateArrival[]>>();
  readonly users: ReadonlySet<string>;

  constructor(
    private readonly seed: number,
    readonly flows: readonly EstateFlow[],
  ) {
    this.users = new Set(flows.map((f) => f.user));
  }

  /** The arrivals of minute `bucket` (epoch ms / 60 000). */
  arrivalsIn(bucket: number): readonly EstateArrival[] {
    const localDay = Math.floor((bucket * MINUTE_MS + OFFSET_MS) / DAY_MS);
    return this.day(localDay).get(bucket) ?? [];
  }

  private day(localDay: number): Map<number, EstateArrival[]> {
    let day = this.days.get(localDay);
    if (day) return day;
    day = new Map();
    for (const [index, flow] of this.flows.entries()) {
      for (const a of this.arrivalsOf(flow, index, localDay)) {
        const bucket = Math.floor(a.time / MINUTE_MS);
        const list = day.get(bucket);
        if (list) list.push(a);
        else day.set(bucket, [a]);
      }
    }
    if (this.days.size >= 4) this.days.delete(this.days.keys().next().value as number);
    this.days.set(localDay, day);
    return day;
  }

  private businessDay(localDay: number): boolean {
    const date = new Date(localDay * DAY_MS).toISOString().slice(0, 10);
    return !this.calendar.excludes({ date, weekday: new Date(localDay * DAY_MS).getUTCDay() });
  }

  private lastBusinessDayOfMonth(localDay: number): boolean {
    if (!this.businessDay(localDay)) return false;
    const month = new Date(localDay * DAY_MS).getUTCMonth();
    for (let d = localDay + 1; new Date(d * DAY_MS).getUTCMonth() === month; d++) if (this.businessDay(d)) return false;
    return true;
  }

  private scheduled(flow: EstateFlow, index: number, localDay: number): boolean {
    const weekday = new Date(localDay * DAY_MS).getUTCDay() || 7;
    switch (flow.kind) {
      case 'business':
      case 'twice':
        return this.businessDay(localDay);
      case 'weekly':
        return weekday === flow.weekday;
      case 'daily':
        return true;
      case 'month_end':
        return this.lastBusinessDayOfMonth(localDay);
      case 'adhoc':
        return hashUnit(this.seed, index, localDay, 0xad) < 0.3;
    }
  }

  private arrivalsOf(flow: EstateFlow, index: number, localDay: number): EstateArrival[] {
    if (!this.scheduled(flow, index, localDay)) return [];
    const out: EstateArrival[] = [];
    const h = (...more: number[]): number => hashUnit(this.seed, index, localDay, ...more);
    if (flow.kind !== 'adhoc' && h(1) < MISSED_SHARE) return out;
    // One late outlier a month: the day of the month it falls on is the flow's own.
    const dayOfMonth = new Date(localDay * DAY_MS).getUTCDate();
    const outlierDay = 1 + (hash32(this.seed, index, Math.floor(localDay / 30)) % 28);
    flow.means.forEach((mean, n) => {
      let minute = flow.kind === 'adhoc' ? 8 * 60 + h(2, n) * 10 * 60 : mean + flow.sigma * normal(h(3, n), h(4, n));
      if (flow.kind !== 'adhoc' && n === 0 && dayOfMonth === outlierDay) minute += LATE_OUTLIER_MINUTES;
      const time = localDay * DAY_MS - OFFSET_MS + Math.floor(minute * MINUTE_MS);
      const file = this.fileName(flow, time, n + 1, Math.floor(h(5, n) * 0xffffffff));
      if (h(6, n) < FAILED_ATTEMPT_SHARE) out.push({ time: time - (1 + Math.floor(h(7, n) * 5)) * MINUTE_MS, flow, file, failed: true });
      out.push({ time, flow, file, failed: false });
    });
    return out;
  }

  private fileName(flow: EstateFlow, time: number, n: number, random: number): string {
    const local = new Date(time + OFFSET_MS);
    const yyyy = String(local.getUTCFullYear());
    const mm = pad(local.getUTCMonth() + 1);
    const dd = pad(local.getUTCDate());
    const values: Record<string, string> = {
      user: flow.user,
      yyyymmdd: `${yyyy}${mm}${dd}`,
      ddmmyyyy: `${dd}${mm}${yyyy}`,
      yyyy,
      mm,
      dd,
      yyyymm: `${yyyy}${mm}`,
      hhmmss: `${pad(local.getUTCHours())}${pad(local.getUTCMinutes())}${pad(local.getUTCSeconds())}`,
      n: String(n),
      seq: pad(random % 10_000, 4),
      id: (random >>> 0).toString(16).padStart(8, '0') + (hash32(random, 1) >>> 0).toString(16).padStart(8, '0'),
    };
    return flow.template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? '');
  }
}

/** The stored record of an estate arrival. */
export function estateRecord(a: EstateArrival): StoredRecord {
  const f = a.flow;
  const dir = a.file.slice(0, a.file.lastIndexOf('/'));
  const local = new Date(a.time + OFFSET_MS - 30_000);
  // A flow's files are about one size (a bank's statement is about as long every day): ±20 % around its own.
  const typical = 2_000 + (hash32(f.means[0] ?? 0, f.sigma, f.user.length) % 100_000);
  const size = Math.round(typical * (0.8 + 0.4 * ((hash32(a.time, 5) % 1000) / 1000)));
  return {
    DATAHORA: new Date(a.time).toISOString(),
    INSTANCE: f.instance,
    USUARIO: f.user,
    CONEXAO: `SFTP sftp.${f.user.toLowerCase()}.example:22 ${f.event === 5 ? '->' : '<-'} ${dir}`,
    DATAARQUIVO: `${local.getUTCFullYear()}${pad(local.getUTCMonth() + 1)}${pad(local.getUTCDate())}`,
    EVENTO: f.event,
    HORAARQUIVO: `${pad(local.getUTCHours())}${pad(local.getUTCMinutes())}${pad(local.getUTCSeconds())}`,
    MAXTAMREG: 240,
    NUMREG: a.failed ? 0 : Math.floor(size / 242),
    MENSAGEM: a.failed ? 'Timeout waiting for partner response (120 s)' : f.event === 5 ? 'File transmitted successfully' : 'File received successfully',
    NOMEARQUIVO: a.file,
    TAGS: '',
    PROCID: 1000 + (hash32(a.time, 3) % 60_000),
    REDE: 'SFTP',
    RESULTADO: a.failed ? 21 : 0,
    TAMARQUIVO: a.failed ? 0 : size,
    THREADID: 1 + (hash32(a.time, 4) % 64),
    TIPOREC: 'FB',
  };
}
