import { hash32, hashUnit } from '../src/simulator/random.js';
import type { Transfer } from '../src/source/transfer.js';
import { zoneOffsetMs } from '../src/util/zoned-time.js';

/**
 * A second estate for the discover bench (issue 52), unlike the first in every way that broke discover: Europe's
 * clocks with a DST change inside the span (Berlin and London), German (Bavarian, configured) and English
 * (not configured: inferred) holidays, files sent at a fixed UTC time, deliveries in parts on some days or always,
 * nightly batches on both sides of midnight, names that change case, flows that stop and flows that start, and
 * ad-hoc noise. Every arrival is a pure function of (seed, flow, day); the truth is what discover should say.
 */

const DAY = 86_400_000;
const MINUTE = 60_000;

export type EuropeKind = 'de_business' | 'uk_business' | 'utc_daily' | 'parts_sometimes' | 'parts_always' | 'night' | 'case' | 'stopped' | 'started' | 'adhoc';

export interface EuropeFlow {
  user: string;
  event: 'transmission' | 'reception';
  kind: EuropeKind;
  /** The zone whose clock the partner keeps (`UTC` for a fixed UTC time). */
  zone: string;
  /** Mean arrival, minutes of its zone's day (past 1440: the next day). */
  mean: number;
  sigma: number;
  /** Holidays the partner keeps (dates), besides weekends for business-day kinds. */
  holidays: ReadonlySet<string>;
  businessDays: boolean;
  /** Name of its file on a day (and part `i` of `n`). */
  name(date: string, part?: { i: number; n: number }): string;
  /** The glob its files should be proposed under (any casing written as discover writes it). */
  pattern: string;
}

export interface EuropeTruth {
  flow: EuropeFlow;
  /** What discover should do with it. */
  expect: 'proposed' | 'stopped' | 'not_proposed';
  /** For proposed flows: the zone its rule should carry, its weekdays, its calendar (null: none). */
  timezone?: string;
  weekdays?: number[];
  calendar?: string | null;
}

/** Bavaria's (configured as `de_by`) and England's (not configured) public holidays on weekdays, March to May 2026. */
const DE_BY = new Set(['2026-04-03', '2026-04-06', '2026-05-01', '2026-05-14']);
const GB = new Set(['2026-04-03', '2026-04-06', '2026-05-04']);
const NONE: ReadonlySet<string> = new Set();

/** The estate's period: ten weeks across Europe's March DST change and the Easter and May holidays. */
export const EUROPE_SINCE = Date.parse('2026-03-02T00:00:00Z');
export const EUROPE_DAYS = 70;
export const EUROPE_ZONE = 'Europe/Berlin';
export const EUROPE_CALENDARS = { de_by: { holidays: { country: 'DE', region: 'BY', types: ['public' as const] }, exclude_dates: [], exclude_weekdays: ['sat' as const, 'sun' as const] } };

function ymd(date: string): string {
  return date.replace(/-/g, '');
}

/** The estate: `per` flows of each kind. */
export function europeEstate(per: number): EuropeTruth[] {
  const out: EuropeTruth[] = [];
  const two = (n: number): string => String(n).padStart(2, '0');
  for (let i = 1; i <= per; i++) {
    const n = two(i);
    const h = hash32(52, i);
    const mean = (base: number): number => base + (h % 90);
    out.push({
      flow: { user: `BAYERNBANK${n}`, event: 'reception', kind: 'de_business', zone: 'Europe/Berlin', mean: mean(6 * 60), sigma: 8, holidays: DE_BY, businessDays: true, name: (d) => `/in/BAYERNBANK${n}/KONTOAUSZUG_${ymd(d)}.XML`, pattern: `/in/BAYERNBANK${n}/KONTOAUSZUG_*.XML` },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5],
      calendar: 'de_by',
    });
    out.push({
      flow: { user: `LONDONBANK${n}`, event: 'reception', kind: 'uk_business', zone: 'Europe/London', mean: mean(7 * 60), sigma: 10, holidays: GB, businessDays: true, name: (d) => `/in/LONDONBANK${n}/STATEMENT_${ymd(d)}.CSV`, pattern: `/in/LONDONBANK${n}/STATEMENT_*.CSV` },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5],
      calendar: 'gb',
    });
    out.push({
      flow: { user: `CLEARING${n}`, event: 'reception', kind: 'utc_daily', zone: 'UTC', mean: 5 * 60 + 30 + (h % 30), sigma: 2, holidays: NONE, businessDays: false, name: (d) => `/in/CLEARING${n}/SETTLEMENT_${ymd(d)}.DAT`, pattern: `/in/CLEARING${n}/SETTLEMENT_*.DAT` },
      expect: 'proposed',
      timezone: 'UTC',
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      calendar: null,
    });
    out.push({
      flow: { user: `SPLITCO${n}`, event: 'reception', kind: 'parts_sometimes', zone: 'Europe/Berlin', mean: mean(8 * 60), sigma: 6, holidays: NONE, businessDays: false, name: (d, p) => `/in/SPLITCO${n}/POSITIONS_${ymd(d)}${p ? `_${p.i}of${p.n}` : ''}.TXT`, pattern: `/in/SPLITCO${n}/POSITIONS_*.TXT` },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      calendar: null,
    });
    out.push({
      flow: { user: `TRIPART${n}`, event: 'transmission', kind: 'parts_always', zone: 'Europe/Berlin', mean: mean(15 * 60), sigma: 5, holidays: NONE, businessDays: false, name: (d, p) => `/out/TRIPART${n}/ZAHLUNG_${ymd(d)}_${String(p?.i ?? 1).padStart(3, '0')}of003.SEPA`, pattern: `/out/TRIPART${n}/ZAHLUNG_*_*of003.SEPA` },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      calendar: null,
    });
    out.push({
      flow: { user: `NIGHTLY${n}`, event: 'reception', kind: 'night', zone: 'Europe/Berlin', mean: 23 * 60 + 58, sigma: 3, holidays: NONE, businessDays: false, name: (d) => `/in/NIGHTLY${n}/EOD_${ymd(d)}.ZIP`, pattern: `/in/NIGHTLY${n}/EOD_*.ZIP` },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      calendar: null,
    });
    out.push({
      flow: {
        user: `MIXEDCASE${n}`,
        event: 'reception',
        kind: 'case',
        zone: 'Europe/Berlin',
        mean: mean(10 * 60),
        sigma: 7,
        holidays: NONE,
        businessDays: false,
        name: (d) => (d < '2026-04-06' ? `/in/MIXEDCASE${n}/report_${ymd(d)}.csv` : `/in/MIXEDCASE${n}/REPORT_${ymd(d)}.CSV`),
        pattern: `/in/MIXEDCASE${n}/REPORT_*.CSV`,
      },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      calendar: null,
    });
    out.push({
      flow: { user: `GONEAWAY${n}`, event: 'reception', kind: 'stopped', zone: 'Europe/Berlin', mean: mean(9 * 60), sigma: 6, holidays: NONE, businessDays: false, name: (d) => `/in/GONEAWAY${n}/ORDERS_${ymd(d)}.EDI`, pattern: `/in/GONEAWAY${n}/ORDERS_*.EDI` },
      expect: 'stopped',
    });
    out.push({
      flow: { user: `NEWCOMER${n}`, event: 'transmission', kind: 'started', zone: 'Europe/Berlin', mean: mean(11 * 60), sigma: 6, holidays: NONE, businessDays: false, name: (d) => `/out/NEWCOMER${n}/INVOICES_${ymd(d)}.XML`, pattern: `/out/NEWCOMER${n}/INVOICES_*.XML` },
      expect: 'proposed',
      timezone: 'Europe/Berlin',
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      calendar: null,
    });
    out.push({
      flow: { user: `ADHOC${n}`, event: 'reception', kind: 'adhoc', zone: 'Europe/Berlin', mean: 12 * 60, sigma: 300, holidays: NONE, businessDays: false, name: (d) => `/in/ADHOC${n}/DOC_${ymd(d)}_${hash32(h, Number(ymd(d))) % 100_000}.PDF`, pattern: `/in/ADHOC${n}/DOC_*_*.PDF` },
      expect: 'not_proposed',
    });
  }
  return out;
}

/** Epoch ms of `minutes` after the local midnight of `date` in `zone` (DST-correct: the offset of that instant). */
function localInstant(date: string, minutes: number, zone: string): number {
  const guess = Date.parse(`${date}T00:00:00Z`) + minutes * MINUTE;
  let at = guess;
  for (let i = 0; i < 2; i++) at = guess - zoneOffsetMs(at, zone);
  return at;
}

/** A standard normal from two uniforms, clipped at 3 sigma. */
function normal(u1: number, u2: number): number {
  const z = Math.sqrt(-2 * Math.log(Math.max(u1, 1e-12))) * Math.cos(2 * Math.PI * u2);
  return Math.max(-3, Math.min(3, z));
}

/** Every successful transfer of the estate in its period, in time order. */
export function europeTransfers(truths: readonly EuropeTruth[]): Transfer[] {
  const out: Transfer[] = [];
  truths.forEach(({ flow }, index) => {
    for (let d = 0; d < EUROPE_DAYS; d++) {
      const date = new Date(EUROPE_SINCE + d * DAY).toISOString().slice(0, 10);
      const weekday = new Date(EUROPE_SINCE + d * DAY).getUTCDay();
      const h = hash32(52, index, d);
      if (flow.businessDays && (weekday === 0 || weekday === 6 || flow.holidays.has(date))) continue;
      if (flow.kind === 'stopped' && d >= EUROPE_DAYS - 21) continue;
      if (flow.kind === 'started' && d < 28) continue;
      if (flow.kind === 'adhoc' && hashUnit(h, 1) > 0.35) continue;
      // A day's file is missing now and then.
      if (flow.kind !== 'adhoc' && hashUnit(h, 2) < 0.01) continue;
      const at = localInstant(date, flow.mean + flow.sigma * normal(hashUnit(h, 3), hashUnit(h, 4)), flow.zone);
      const parts = flow.kind === 'parts_always' ? 3 : flow.kind === 'parts_sometimes' && hashUnit(h, 5) < 0.2 ? 2 : 0;
      if (parts === 0) out.push(transfer(flow, index, flow.name(date), at));
      for (let i = 1; i <= parts; i++) out.push(transfer(flow, index, flow.name(date, { i, n: parts }), at + (i - parts) * 4 * MINUTE));
    }
  });
  return out.sort((a, b) => a.time - b.time);
}

function transfer(flow: EuropeFlow, index: number, file: string, time: number): Transfer {
  const eventCode = flow.event === 'transmission' ? 5 : 7;
  return {
    id: `eu-${index}-${time}-${file}`,
    source: 'eu',
    time: Math.round(time),
    instance: 'EU01',
    user: flow.user,
    eventCode,
    event: flow.event,
    file,
    code: 0,
    result: 'success',
    size: 1,
    message: '',
    tags: '',
    record: { DATAHORA: '', INSTANCE: 'EU01', USUARIO: flow.user, CONEXAO: '', DATAARQUIVO: '', EVENTO: eventCode, HORAARQUIVO: '', MAXTAMREG: null, NUMREG: null, MENSAGEM: '', NOMEARQUIVO: file, TAGS: '', PROCID: null, REDE: '', RESULTADO: 0, TAMARQUIVO: 1, THREADID: null, TIPOREC: '', DIAS: null },
  };
}
