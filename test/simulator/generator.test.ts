import { describe, expect, it } from 'vitest';
import { BUCKET_MS, HistoryGenerator, type HistoryEntry } from '../../src/simulator/generator.js';
import { getScenario, POSITION_PERIOD_MINUTES, BURST_PERIOD_MINUTES, type ScenarioName } from '../../src/simulator/scenarios.js';
import { hash32, createRandom } from '../../src/simulator/random.js';

// Monday 2026-11-23 00:00 America/Sao_Paulo (03:00 UTC).
const MONDAY = Date.UTC(2026, 10, 23, 3, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function generator(scenario: ScenarioName = 'steady', seed = 1, rate = 20): HistoryGenerator {
  return new HistoryGenerator({ seed, scenario: getScenario(scenario), ratePerMinute: rate, historyStart: MONDAY - 7 * DAY });
}

function range(g: HistoryGenerator, start: number, end: number): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (let b = Math.floor(start / BUCKET_MS); b * BUCKET_MS < end; b++) out.push(...g.bucket(b).filter((e) => e.time >= start && e.time < end));
  return out;
}

/** Local (America/Sao_Paulo, UTC-3) minute of day. */
function localMinute(ms: number): number {
  return Math.floor((((ms - 3 * HOUR) % DAY) + DAY) % DAY / 60_000);
}

describe('random', () => {
  it('is reproducible from its seed and spreads its values', () => {
    const a = createRandom(42);
    const b = createRandom(42);
    const xs = Array.from({ length: 1000 }, () => a.next());
    expect(Array.from({ length: 1000 }, () => b.next())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(xs).size).toBe(1000);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(hash32(1, 2)).not.toBe(hash32(2, 1));
    expect(hash32(2 ** 40)).not.toBe(hash32(0));
  });
});

describe('HistoryGenerator', () => {
  it('gives the same minute the same records, in time order, whatever was generated before', () => {
    const a = generator();
    const b = generator();
    const bucket = Math.floor(MONDAY / BUCKET_MS) + 600;
    b.bucket(bucket + 5);
    expect(a.bucket(bucket)).toEqual(b.bucket(bucket));
    const times = a.bucket(bucket).map((e) => e.time);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(generator('steady', 2).bucket(bucket)).not.toEqual(a.bucket(bucket));
  });

  it('averages the configured rate and keeps every record inside its minute', () => {
    const g = generator('steady', 3, 50);
    const records = range(g, MONDAY + 12 * HOUR, MONDAY + 14 * HOUR);
    // Random traffic only is rate-driven; statements and position files add a few.
    expect(records.length).toBeGreaterThan(50 * 120 * 0.95);
    expect(records.length).toBeLessThan(50 * 120 * 1.05 + 20);
    expect(generator('steady', 3, 0).bucket(Math.floor(MONDAY / BUCKET_MS) + 700).filter((e) => !e.record.NOMEARQUIVO.includes('POSICAO'))).toEqual([]);
  });

  it('makes records with every field in the shapes MFT users see', () => {
    const records = range(generator(), MONDAY + 10 * HOUR, MONDAY + 12 * HOUR).map((e) => e.record);
    for (const r of records) {
      expect(r.DATAHORA).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(['PROD01', 'PROD02', 'HOM01']).toContain(r.INSTANCE);
      expect(r.DATAARQUIVO).toMatch(/^\d{8}$/);
      expect(r.HORAARQUIVO).toMatch(/^\d{6}$/);
      expect([5, 7]).toContain(r.EVENTO);
      expect(r.NOMEARQUIVO).toMatch(/^\/(in|out)\/[A-Z0-9_]+\/[A-Za-z0-9_]+\.(REM|RET|edi|txt)$/);
      expect(r.NOMEARQUIVO.startsWith(r.EVENTO === 5 ? '/out/' : '/in/')).toBe(true);
      if (r.RESULTADO === 0) {
        expect(r.TAMARQUIVO).toBeGreaterThan(0);
        if (r.MAXTAMREG) expect(r.TAMARQUIVO).toBe((r.NUMREG ?? 0) * (r.MAXTAMREG + 2));
      } else {
        expect([4, 12, 21, 28, 36, 99]).toContain(r.RESULTADO);
        expect(r.MENSAGEM).not.toMatch(/success/i);
      }
    }
    const failures = records.filter((r) => r.RESULTADO !== 0).length;
    expect(failures / records.length).toBeGreaterThan(0.005);
    expect(failures / records.length).toBeLessThan(0.05);
    expect(new Set(records.map((r) => r.USUARIO))).toEqual(new Set(['BANK1', 'BANK2', 'BANK3', 'ACME_EDI', 'GLOBEX_EDI', 'PAYROLL', 'CUSTODIA']));
    expect(new Set(records.map((r) => r.INSTANCE))).toEqual(new Set(['PROD01', 'PROD02', 'HOM01']));
  });

  it('delivers one statement per bank per business day before 07:30 local, none at the weekend', () => {
    const g = generator('steady', 1, 1);
    const week = range(g, MONDAY - 2 * DAY, MONDAY + 5 * DAY).filter((e) => e.record.NOMEARQUIVO.includes('EXTRATO_'));
    // Saturday and Sunday first, then Monday..Friday: 3 banks x 5 days.
    expect(week.filter((e) => e.time < MONDAY)).toEqual([]);
    expect(week).toHaveLength(15);
    for (const e of week) {
      expect(localMinute(e.time)).toBeLessThan(7 * 60 + 30);
      expect(localMinute(e.time)).toBeGreaterThanOrEqual(6 * 60);
      expect(e.record.RESULTADO).toBe(0);
      expect(e.record.NOMEARQUIVO).toMatch(/^\/in\/BANK[123]\/EXTRATO_202611(2[3-7])\.RET$/);
    }
  });

  it('demo: BANK2 statement in the minute after its 08:00 deadline (the demo shows it missing, then late), the others on time', () => {
    const statements = range(generator('demo'), MONDAY, MONDAY + DAY).filter((e) => e.record.NOMEARQUIVO.includes('EXTRATO_'));
    const minutes = Object.fromEntries(statements.map((e) => [e.record.USUARIO, localMinute(e.time)]));
    expect(minutes['BANK2']).toBe(8 * 60);
    expect(statements.find((e) => e.record.USUARIO === 'BANK2')?.time).toBeGreaterThan(MONDAY + 5 * HOUR);
    for (const bank of ['BANK1', 'BANK3']) expect(minutes[bank], bank).toBeLessThan(7 * 60 + 30);
  });

  it('late-file: BANK2 statement after 08:30 local, and some position files after their slot start', () => {
    const late = generator('late-file');
    const statements = range(late, MONDAY, MONDAY + DAY).filter((e) => e.record.NOMEARQUIVO.includes('EXTRATO_'));
    const bank2 = statements.find((e) => e.record.USUARIO === 'BANK2');
    expect(localMinute(bank2?.time ?? 0)).toBeGreaterThanOrEqual(8 * 60 + 30);

    const slotMs = POSITION_PERIOD_MINUTES * 60_000;
    const lateness = (g: HistoryGenerator): number[] =>
      range(g, MONDAY + 10 * HOUR, MONDAY + 14 * HOUR)
        .filter((e) => e.record.USUARIO === 'CUSTODIA')
        .map((e) => {
          const hhmm = /_(\d{2})(\d{2})\.RET$/.exec(e.record.NOMEARQUIVO);
          const slotLocalMinute = Number(hhmm?.[1]) * 60 + Number(hhmm?.[2]);
          return localMinute(e.time) - slotLocalMinute;
        });
    const steadyLateness = lateness(generator('steady'));
    expect(steadyLateness).toHaveLength((4 * HOUR) / slotMs);
    expect(steadyLateness.every((m) => m < 0)).toBe(true);
    const lateLateness = lateness(late);
    // A file late for the slot before the range may land inside it.
    expect(lateLateness.length - (4 * HOUR) / slotMs).toBeGreaterThanOrEqual(0);
    expect(lateLateness.length - (4 * HOUR) / slotMs).toBeLessThanOrEqual(1);
    expect(lateLateness.filter((m) => m >= 3).length).toBeGreaterThan(2);
    expect(lateLateness.filter((m) => m < 0).length).toBeGreaterThan(10);
  });

  it('burst: 8 failures within 2 minutes for one partner, then quiet enough for a 10m/5 rule to resolve', () => {
    const g = generator('burst');
    const periodMs = BURST_PERIOD_MINUTES * 60_000;
    const periodStart = Math.ceil((MONDAY + 10 * HOUR) / periodMs) * periodMs;
    const records = range(g, periodStart, periodStart + periodMs);
    const failures = records.filter((e) => e.record.RESULTADO !== 0);
    const byGroup = new Map<string, HistoryEntry[]>();
    for (const f of failures) byGroup.set(`${f.record.INSTANCE}/${f.record.USUARIO}`, [...(byGroup.get(`${f.record.INSTANCE}/${f.record.USUARIO}`) ?? []), f]);
    const [group, groupFailures] = [...byGroup.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? ['', []];
    const inBurst = groupFailures.filter((e) => e.time < periodStart + 2 * 60_000);
    expect(inBurst.length, group).toBeGreaterThanOrEqual(8);
    const afterWindow = groupFailures.filter((e) => e.time >= periodStart + 12 * 60_000);
    expect(afterWindow.length).toBeLessThan(5);
    // The steady scenario has no such burst.
    const steadyFailures = range(generator('steady'), periodStart, periodStart + 2 * 60_000).filter((e) => e.record.RESULTADO !== 0);
    expect(steadyFailures.length).toBeLessThan(5);
  });

  it('generates nothing before historyStart', () => {
    const g = new HistoryGenerator({ seed: 1, scenario: getScenario('steady'), ratePerMinute: 20, historyStart: MONDAY + 30_000 });
    const first = g.bucket(Math.floor(MONDAY / BUCKET_MS));
    expect(first.length).toBeGreaterThan(0);
    expect(first.every((e) => e.time >= MONDAY + 30_000)).toBe(true);
    expect(g.bucket(Math.floor(MONDAY / BUCKET_MS) - 1)).toEqual([]);
  });
});
