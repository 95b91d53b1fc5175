import type { ServiceRecord } from '../source/transfer.js';
import { createRandom, hash32, hashString, hashUnit, type Random } from './random.js';
import {
  ERROR_CODES,
  FILE_KINDS,
  PARTNERS,
  SUCCESS_MESSAGES,
  TEST_INSTANCE,
  errorCode,
  type ErrorCode,
  type FileKindName,
  type Partner,
} from './partners.js';
import { POSITION_PERIOD_MINUTES, type Scenario } from './scenarios.js';
import { estateRecord, type Estate, type EstateTruth } from './estate.js';

/** A record as stored: DIAS is left out because it depends on when the record is served. */
export type StoredRecord = Omit<ServiceRecord, 'DIAS'>;

/** One record of the history with its position: ordered by `time`, then `seq`. */
export interface HistoryEntry {
  readonly time: number;
  readonly seq: number;
  readonly record: StoredRecord;
}

export interface GeneratorOptions {
  seed: number;
  scenario: Scenario;
  /** Average random transfers per minute (daily statements, position files and bursts come on top). */
  ratePerMinute: number;
  /** Epoch ms; nothing is generated before it. */
  historyStart: number;
  /** Generated minutes kept for re-reading (default 8). */
  cachedMinutes?: number;
  /** Scheduled flows on top of the traffic (simulate --estate). */
  estate?: Estate;
  /**
   * Epoch ms before which only the estate is generated (default: historyStart): the demo's months of scheduled
   * flows without months of its dense traffic.
   */
  trafficStart?: number;
  /**
   * Epoch ms from which the partners' daily statements are generated when that is before trafficStart (default:
   * trafficStart): the demo's own partners' statements as a flow of weeks, under a day of its traffic.
   */
  statementStart?: number;
}

/** The history is generated one minute at a time, each minute from its own seed. */
export const BUCKET_MS = 60_000;
const DAY_MS = 86_400_000;
/**
 * America/Sao_Paulo has had no DST since 2019, so a fixed offset gives its local time exactly for any
 * recent date, and costs nothing per record (Intl would dominate the generation time).
 */
const SAO_PAULO_OFFSET_MS = -3 * 3_600_000;
/** Daily statements arrive between 06:00 and 07:25 local on business days ... */
const STATEMENT_FIRST_MINUTE = 6 * 60;
const STATEMENT_SPREAD_MINUTES = 85;
/** ... except BANK2's with `lateFiles`, which arrives after the 08:00 deadline (the scenario says when). */
const LATE_STATEMENT_USER = 'BANK2';
const POSITION_USER = 'CUSTODIA';
const DEFAULT_CACHED_MINUTES = 8;

// Salts keep the independent decisions of one bucket from sharing a hash.
const SALT_TRAFFIC = 1;
const SALT_STATEMENT = 2;
const SALT_POSITION = 3;
const SALT_BURST = 4;

interface LocalParts {
  yyyymmdd: string;
  yyyymm: string;
  hhmmss: string;
  hhmm: string;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, i) => pad(i, 2));

function two(n: number): string {
  return TWO_DIGITS[n] ?? pad(n, 2);
}

/**
 * Local date and time parts by arithmetic (days-to-civil, H. Hinnant), because a Date and its getters per
 * record dominated generation time for dense benchmark histories.
 */
function localParts(epochMs: number): LocalParts {
  const local = epochMs + SAO_PAULO_OFFSET_MS;
  const days = Math.floor(local / DAY_MS);
  const secondOfDay = Math.floor((local - days * DAY_MS) / 1000);
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const yyyymm = `${year}${two(month)}`;
  const hhmm = `${two(Math.floor(secondOfDay / 3600))}${two(Math.floor(secondOfDay / 60) % 60)}`;
  return { yyyymm, yyyymmdd: `${yyyymm}${two(day)}`, hhmm, hhmmss: `${hhmm}${two(secondOfDay % 60)}` };
}

const TRAFFIC_PARTNERS = PARTNERS.filter((p) => p.weight > 0);
const TOTAL_WEIGHT = TRAFFIC_PARTNERS.reduce((sum, p) => sum + p.weight, 0);
const ERROR_WEIGHT = ERROR_CODES.reduce((sum, e) => sum + e.weight, 0);

function pickPartner(rng: Random): Partner {
  let r = rng.next() * TOTAL_WEIGHT;
  for (const p of TRAFFIC_PARTNERS) {
    r -= p.weight;
    if (r < 0) return p;
  }
  return rng.pick(TRAFFIC_PARTNERS);
}

function pickError(rng: Random): ErrorCode {
  let r = rng.next() * ERROR_WEIGHT;
  for (const e of ERROR_CODES) {
    r -= e.weight;
    if (r < 0) return e;
  }
  return rng.pick(ERROR_CODES);
}

function partner(user: string): Partner {
  const found = PARTNERS.find((p) => p.user === user);
  if (!found) throw new RangeError(`unknown partner ${user}`);
  return found;
}

interface Draft {
  time: number;
  partner: Partner;
  kind: FileKindName;
  instance: string;
  failure: ErrorCode | null;
  /** For files whose name is fixed by their schedule (position files). */
  slotStart?: number;
  /** Generation order, the tie-break of equal times. */
  order?: number;
}

/**
 * Deterministic, realistic MFT history. `bucket(n)` is a pure function of (seed, scenario, rate, n), so
 * any range is reproduced exactly whatever the page size or the moment of the query, and cost is
 * proportional to the minutes touched, never to the whole history.
 */
export class HistoryGenerator {
  private readonly seed: number;
  private readonly scenario: Scenario;
  private readonly rate: number;
  readonly historyStart: number;
  // A few recent buckets, because consecutive pages of a dense history re-read the same minute.
  private readonly cache = new Map<number, readonly HistoryEntry[]>();
  private readonly cachedMinutes: number;
  readonly users: ReadonlySet<string>;
  private readonly estate: Estate | undefined;
  private readonly trafficStart: number;
  private readonly statementStart: number;
  readonly instances: ReadonlySet<string> = new Set([...PARTNERS.map((p) => p.instance), TEST_INSTANCE]);

  constructor(options: GeneratorOptions) {
    this.seed = hash32(options.seed, hashString(options.scenario.name));
    this.scenario = options.scenario;
    this.rate = Math.max(0, options.ratePerMinute);
    this.historyStart = options.historyStart;
    this.cachedMinutes = Math.max(1, options.cachedMinutes ?? DEFAULT_CACHED_MINUTES);
    this.estate = options.estate;
    this.trafficStart = Math.max(options.historyStart, options.trafficStart ?? options.historyStart);
    this.statementStart = Math.min(this.trafficStart, Math.max(options.historyStart, options.statementStart ?? this.trafficStart));
    this.users = new Set([...PARTNERS.map((p) => p.user), ...(options.estate?.users ?? [])]);
  }

  /** The records of minute `bucket` (epoch ms / BUCKET_MS), ordered by time then seq. */
  bucket(bucket: number): readonly HistoryEntry[] {
    const cached = this.cache.get(bucket);
    if (cached) return cached;
    const entries = this.generate(bucket);
    if (this.cache.size >= this.cachedMinutes) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(bucket, entries);
    return entries;
  }

  private generate(bucket: number): readonly HistoryEntry[] {
    const start = bucket * BUCKET_MS;
    if (start + BUCKET_MS <= this.historyStart) return [];
    const drafts: Draft[] = [];
    if (start + BUCKET_MS > this.trafficStart) {
      this.traffic(bucket, drafts);
      this.statements(bucket, drafts);
      this.positions(bucket, drafts);
      if (this.scenario.bursts) this.burst(bucket, drafts);
    } else if (start + BUCKET_MS > this.statementStart) {
      this.statements(bucket, drafts);
    }

    const rng = createRandom(hash32(this.seed, bucket, 99));
    drafts.forEach((d, i) => (d.order = i));
    drafts.sort((a, b) => a.time - b.time || (a.order ?? 0) - (b.order ?? 0));
    const entries: HistoryEntry[] = [];
    for (const d of drafts) {
      if (d.time >= this.statementStart) entries.push({ time: d.time, seq: entries.length, record: buildRecord(rng, d) });
    }
    const scheduled = this.estate?.arrivalsIn(bucket) ?? [];
    if (scheduled.length === 0) return entries;
    for (const a of scheduled) if (a.time >= this.historyStart) entries.push({ time: a.time, seq: 0, record: estateRecord(a) });
    // Stable: equal times keep the traffic first, then the estate in flow order.
    entries.sort((a, b) => a.time - b.time);
    return entries.map((e, seq) => ({ ...e, seq }));
  }

  /** Whether the position file of `slot` (its hash `h`) comes late in this scenario. */
  private isLatePosition(slot: number, h: number): boolean {
    if (!this.scenario.lateFiles) return false;
    return this.scenario.positionLateAlternate ? slot % 2 === 0 : hashUnit(h, 7) < this.scenario.positionLateShare;
  }

  /** The partner whose connection breaks in burst period `period`, and the period's hash. */
  private burstOf(period: number): { h: number; p: Partner } {
    const h = hash32(this.seed, period, SALT_BURST);
    return { h, p: TRAFFIC_PARTNERS[h % TRAFFIC_PARTNERS.length] ?? partner('BANK1') };
  }

  /**
   * What the scenario plants on purpose between `from` and `to` (epoch ms): the bursts (each BURST_MINUTES of
   * failures for one partner on its instance), the position slots whose file comes late and the business days
   * whose BANK2 statement comes late (local dates). The shipped rules' noise test holds the alerts against it.
   */
  planned(from: number, to: number): {
    bursts: Array<{ start: number; user: string; instance: string }>;
    latePositionSlots: number[];
  } {
    const bursts: Array<{ start: number; user: string; instance: string }> = [];
    if (this.scenario.bursts) {
      const every = this.scenario.burstPeriodMinutes;
      for (let period = Math.floor(from / BUCKET_MS / every); period * every * BUCKET_MS < to; period++) {
        const start = period * every * BUCKET_MS;
        if (start < from || start < this.historyStart) continue;
        const { p } = this.burstOf(period);
        bursts.push({ start, user: p.user, instance: p.instance });
      }
    }
    const latePositionSlots: number[] = [];
    if (this.scenario.lateFiles) {
      for (let slot = Math.ceil(from / BUCKET_MS / POSITION_PERIOD_MINUTES); slot * POSITION_PERIOD_MINUTES * BUCKET_MS < to; slot++) {
        if (this.isLatePosition(slot, hash32(this.seed, slot, SALT_POSITION))) latePositionSlots.push(slot * POSITION_PERIOD_MINUTES * BUCKET_MS);
      }
    }
    return { bursts, latePositionSlots };
  }

  private traffic(bucket: number, out: Draft[]): void {
    if (this.rate === 0) return;
    const rng = createRandom(hash32(this.seed, bucket, SALT_TRAFFIC));
    // +-25% around the rate, with a random rounding so the long-run average is the rate exactly.
    const count = Math.floor(this.rate * (0.75 + 0.5 * rng.next()) + rng.next());
    const start = bucket * BUCKET_MS;
    for (let i = 0; i < count; i++) {
      const p = pickPartner(rng);
      out.push({
        time: start + Math.floor(rng.next() * BUCKET_MS),
        partner: p,
        kind: rng.pick(p.kinds),
        instance: rng.chance(0.05) ? TEST_INSTANCE : p.instance,
        failure: rng.chance(this.scenario.errorRate) ? pickError(rng) : null,
      });
    }
  }

  private statements(bucket: number, out: Draft[]): void {
    const localMs = bucket * BUCKET_MS + SAO_PAULO_OFFSET_MS;
    const day = Math.floor(localMs / DAY_MS);
    const weekday = (day + 4) % 7; // 1970-01-01 was a Thursday; 0 = Sunday
    if (weekday === 0 || weekday === 6) return;
    const minuteOfDay = Math.floor((localMs - day * DAY_MS) / BUCKET_MS);
    PARTNERS.forEach((p, index) => {
      if (!p.dailyStatement) return;
      const h = hash32(this.seed, day, index, SALT_STATEMENT);
      // The scenario's late statement is the traffic's: the weeks of statements before it came as usual.
      const late = this.scenario.lateFiles && p.user === LATE_STATEMENT_USER && bucket * BUCKET_MS >= this.trafficStart;
      const { firstMinute, spreadMinutes } = this.scenario.lateStatement;
      const arrival = late ? firstMinute + (h % spreadMinutes) : STATEMENT_FIRST_MINUTE + (h % STATEMENT_SPREAD_MINUTES);
      if (arrival !== minuteOfDay) return;
      out.push({ time: bucket * BUCKET_MS + (hash32(h, 1) % BUCKET_MS), partner: p, kind: 'statement', instance: p.instance, failure: null });
    });
  }

  /** CUSTODIA sends a position file per slot, normally 1-2 minutes before the slot starts. */
  private positions(bucket: number, out: Draft[]): void {
    // Arrivals range from slot start - 2 to slot start + 6 minutes, so only one slot can land in this minute.
    const slot = Math.floor((bucket + 2) / POSITION_PERIOD_MINUTES);
    const slotMinute = slot * POSITION_PERIOD_MINUTES;
    const h = hash32(this.seed, slot, SALT_POSITION);
    const late = this.isLatePosition(slot, h);
    const { minutes, spread } = this.scenario.positionLateDelay;
    const arrival = late ? slotMinute + minutes + (h % spread) : slotMinute - 2 + (h % 2);
    if (arrival !== bucket) return;
    const p = partner(POSITION_USER);
    out.push({
      // A late file comes in the first 40 s of its minute, so the demo's late file is resolved well within its promise.
      time: bucket * BUCKET_MS + (hash32(h, 2) % (late ? 40_000 : BUCKET_MS)),
      partner: p,
      kind: 'position',
      instance: p.instance,
      failure: null,
      slotStart: slotMinute * BUCKET_MS,
    });
  }

  /** A partner's connection breaks for a while: several failures with one code on its instance. */
  private burst(bucket: number, out: Draft[]): void {
    const every = this.scenario.burstPeriodMinutes;
    const phase = ((bucket % every) + every) % every;
    if (phase >= this.scenario.burstShape.minutes) return;
    const period = Math.floor(bucket / every);
    const { h, p } = this.burstOf(period);
    const failure = errorCode(h % 2 === 0 ? 4 : 21) ?? null;
    const rng = createRandom(hash32(h, bucket));
    for (let i = 0; i < this.scenario.burstShape.failuresPerMinute; i++) {
      out.push({ time: bucket * BUCKET_MS + Math.floor(rng.next() * BUCKET_MS), partner: p, kind: rng.pick(p.kinds), instance: p.instance, failure });
    }
  }
}

function fileName(rng: Random, d: Draft, file: LocalParts): string {
  const user = d.partner.user;
  const seq = pad(rng.int(1, 9999), 4);
  switch (d.kind) {
    // Named by the second the file was written and two random digits, as banks' systems do: a random 4-digit
    // sequence alone made a few same-named, same-sized remittances a day, duplicates the scenario never meant.
    case 'remittance':
      return `/out/${user}/REM_${file.yyyymmdd}_${file.hhmmss}${seq.slice(2)}.REM`;
    case 'return':
      return `/in/${user}/RET_${file.yyyymmdd}_${file.hhmmss}${seq.slice(2)}.RET`;
    case 'statement':
      return `/in/${user}/EXTRATO_${file.yyyymmdd}.RET`;
    case 'edi-out':
      return `/out/${user}/ORDERS_${file.yyyymmdd}${file.hhmmss}_${seq}.edi`;
    case 'edi-in':
      return `/in/${user}/INVOIC_${file.yyyymmdd}${file.hhmmss}_${seq}.edi`;
    case 'payroll':
      return `/out/${user}/FOLHA_${file.yyyymm}_${seq}.txt`;
    case 'position': {
      const slot = localParts(d.slotStart ?? d.time);
      return `/in/${user}/POSICAO_${slot.yyyymmdd}_${slot.hhmm}.RET`;
    }
  }
}

function buildRecord(rng: Random, d: Draft): StoredRecord {
  const kind = FILE_KINDS[d.kind];
  const p = d.partner;
  // The file was written a little before it moved.
  const fileTime = d.time - rng.int(5, 900) * 1000;
  const file = localParts(fileTime);
  const path = fileName(rng, d, file);
  // A partner's files of one kind have a typical size (a bank's daily return file is about as long every day);
  // each file varies around it, as real ones do.
  const typical = kind.minRecords + (hashString(`${p.user}/${kind.name}`) % (kind.maxRecords - kind.minRecords + 1));
  const records = Math.min(kind.maxRecords, Math.max(kind.minRecords, Math.round(typical * (0.6 + 0.8 * rng.next()))));
  const fullSize = kind.lrecl > 0 ? records * (kind.lrecl + 2) : records * rng.int(40, 300);
  const failure = d.failure;
  const size = failure === null ? fullSize : failure.partial ? Math.floor(fullSize * rng.next()) : 0;
  const direction = kind.event === 5 ? '->' : '<-';
  const session = rng.int(10_000, 99_999);
  return {
    DATAHORA: new Date(d.time).toISOString(),
    INSTANCE: d.instance,
    USUARIO: p.user,
    CONEXAO: `${p.network} ${p.host}:${p.port} ${direction} ${path.slice(0, path.lastIndexOf('/'))} session ${session}`,
    DATAARQUIVO: file.yyyymmdd,
    EVENTO: kind.event,
    HORAARQUIVO: file.hhmmss,
    MAXTAMREG: kind.lrecl,
    NUMREG: failure === null ? records : 0,
    MENSAGEM: failure === null ? (SUCCESS_MESSAGES[kind.event] ?? 'OK') : failure.message({ user: p.user, host: p.host, port: p.port, path }),
    NOMEARQUIVO: path,
    TAGS: rng.chance(0.1) ? '' : kind.tags,
    PROCID: rng.int(1000, 65_000),
    REDE: p.network,
    RESULTADO: failure === null ? 0 : failure.code,
    TAMARQUIVO: size,
    THREADID: rng.int(1, 64),
    TIPOREC: kind.recfm,
  };
}

function clock(minutes: number): string {
  return `${pad(Math.floor(minutes / 60), 2)}:${pad(Math.round(minutes) % 60, 2)}`;
}

/**
 * The traffic's own recurring flows for the truth file: each partner's daily statement, Monday to Friday (holidays
 * included), uniform over its minutes. Everything else of the traffic comes too often or at random.
 */
export function statementTruth(scenario: Scenario): EstateTruth[] {
  return PARTNERS.filter((p) => p.dailyStatement).map((p) => {
    const late = scenario.lateFiles && p.user === LATE_STATEMENT_USER;
    const first = late ? scenario.lateStatement.firstMinute : STATEMENT_FIRST_MINUTE;
    const spread = late ? scenario.lateStatement.spreadMinutes : STATEMENT_SPREAD_MINUTES;
    return {
      user: p.user,
      event: 'reception' as const,
      pattern: `/in/${p.user}/EXTRATO_*.RET`,
      kind: 'weekdays' as const,
      recurring: true,
      weekdays: [1, 2, 3, 4, 5],
      calendar: null,
      arrivals: [{ mean: clock(first + spread / 2), p95: clock(first + 0.95 * spread), p99: clock(first + 0.99 * spread) }],
    };
  });
}
