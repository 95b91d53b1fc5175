import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BusinessCalendar, calendarSchema } from '../../src/sla/business-calendar.js';
import { judgeOccurrence } from '../../src/sla/occurrence.js';

const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

describe('business calendars', () => {
  it('excludes the holidays of a country and region of the types asked, extra dates and weekdays', () => {
    const b3 = new BusinessCalendar(calendarSchema.parse({ holidays: { country: 'BR', region: 'SP', types: ['public', 'bank'] }, exclude_dates: ['2026-12-24'], exclude_weekdays: ['sat', 'sun'] }));
    const day = (date: string) => ({ date, weekday: new Date(`${date}T12:00:00Z`).getUTCDay() });
    // Tiradentes (public), Carnival Monday (bank), São Paulo's 9 July (regional), the extra date, a Saturday.
    for (const d of ['2026-04-21', '2026-02-16', '2026-07-09', '2026-12-24', '2026-11-28']) expect(b3.excludes(day(d)), d).toBe(true);
    // An ordinary Wednesday, and Carnival Saturday's "optional" day is not of the types asked (and is a Saturday anyway).
    expect(b3.excludes(day('2026-11-25'))).toBe(false);
    const publicOnly = new BusinessCalendar(calendarSchema.parse({ holidays: { country: 'BR', types: ['public'] } }));
    expect(publicOnly.excludes(day('2026-02-16'))).toBe(false);
    expect(publicOnly.excludes(day('2026-07-09'))).toBe(false); // São Paulo's own holiday, not Brazil's
  });

  it('names an unknown country or region, with the known regions', () => {
    const badCountry = calendarSchema.safeParse({ holidays: { country: 'XX' } });
    expect(badCountry.success).toBe(false);
    expect(JSON.stringify(badCountry.error?.issues)).toContain('unknown country \\"XX\\"');
    const badRegion = calendarSchema.safeParse({ holidays: { country: 'BR', region: 'ZZ' } });
    expect(JSON.stringify(badRegion.error?.issues)).toMatch(/unknown region \\"ZZ\\" of BR \(known: AC, AL/);
  });

  it('check refuses a rule naming a calendar the config does not define, at its calendar: line, naming the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-cal-'));
    try {
      await writeFile(join(dir, 'rules.yaml'), ['rules:', '  - name: StatementMissing', '    type: missing_file', '    deadline: "0 8 * * *"', '    window: 8h', '    calendar: b4', ''].join('\n'));
      await writeFile(
        join(dir, 'config.yaml'),
        ['sources: [{name: s, base_url: "http://127.0.0.1:1", username: u, password: p}]', 'rule_files: [rules.yaml]', 'calendars:', '  b3: { exclude_weekdays: [sat, sun] }', ''].join('\n'),
      );
      const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(process.execPath, [MAIN, 'check', '--config', join(dir, 'config.yaml')], (err, _out, stderr) => resolve({ code: err && typeof err.code === 'number' ? err.code : 0, stderr })),
      );
      expect(code).toBe(1);
      expect(stderr).toContain(`${join(dir, 'rules.yaml')}:6:15:`);
      expect(stderr).toContain('rule "StatementMissing": calendar: unknown calendar "b4" (did you mean "b3"?)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('judging an occurrence', () => {
  const D = 1_000_000_000;
  const base = { deadline: D, window: 3_600_000, minCount: 2, closesAt: D + 86_400_000, span: { from: D - 7_200_000, until: D + 86_400_000 }, now: D + 86_400_000 };

  it('is on time with min_count in the window; late when the count is completed before the close (the completing arrival); else missing', () => {
    expect(judgeOccurrence({ ...base, times: [D - 10, D] })).toMatchObject({ outcome: 'on_time', final: true, arrivedAt: D });
    expect(judgeOccurrence({ ...base, times: [D - 10, D + 60_000, D + 120_000] })).toMatchObject({ outcome: 'late', final: true, arrivedAt: D + 60_000 });
    expect(judgeOccurrence({ ...base, times: [D - 10, D + 86_400_001] })).toMatchObject({ outcome: 'missing', final: true, count: 1 });
    // An arrival before the window does not count.
    expect(judgeOccurrence({ ...base, times: [D - 3_600_000, D] })).toMatchObject({ outcome: 'missing' });
  });

  it('keeps as evidence the arrivals that met min_count (all of them when fewer came), as indexes of the times, and counts every arrival', () => {
    const before = D - 3_600_000;
    // On time with four in the window: the first two are the evidence, four are counted.
    expect(judgeOccurrence({ ...base, times: [before, D - 30, D - 20, D - 10, D] })).toMatchObject({ outcome: 'on_time', count: 4, arrivedAt: D - 20, evidence: { from: 1, to: 3 } });
    // Late: the one in the window and the first late one.
    expect(judgeOccurrence({ ...base, times: [D - 10, D + 60_000, D + 120_000] })).toMatchObject({ outcome: 'late', count: 3, evidence: { from: 0, to: 2 } });
    // Missing: the one that came.
    expect(judgeOccurrence({ ...base, times: [before, D - 10, D + 86_400_001] })).toMatchObject({ outcome: 'missing', count: 1, evidence: { from: 1, to: 2 } });
  });

  it('says nothing before the deadline or on a window not read from its start (nor with no data at all: a first start); missing stays open until the close is read; no_data when a window read from its start was not read past its deadline by its close', () => {
    expect(judgeOccurrence({ ...base, times: [], now: D - 1 })).toBeUndefined();
    expect(judgeOccurrence({ ...base, times: [], span: { from: D - 60_000, until: D + 86_400_000 } })).toBeUndefined();
    expect(judgeOccurrence({ ...base, times: [], span: { from: 0, until: D + 1 }, now: D + 1 })).toMatchObject({ outcome: 'missing', final: false });
    expect(judgeOccurrence({ ...base, times: [], span: { from: 0, until: D - 1 }, now: D + 1 })).toBeUndefined();
    expect(judgeOccurrence({ ...base, times: [], span: undefined })).toBeUndefined();
    expect(judgeOccurrence({ ...base, times: [], span: { from: 0, until: D - 1 } })).toMatchObject({ outcome: 'no_data', final: false });
  });

  it('gives no verdict across a window of the history that could not be read: no_data when it is in the window, late counted only up to it after the deadline', () => {
    const span = (start: number, end: number) => ({ from: D - 7_200_000, until: D + 86_400_000, unread: [{ start, end }] });
    // A hole in the window (even with min_count arrivals outside it: what it held is not known) — and not before the close.
    expect(judgeOccurrence({ ...base, times: [], span: span(D - 600_000, D - 300_000) })).toMatchObject({ outcome: 'no_data', final: false });
    expect(judgeOccurrence({ ...base, times: [D - 10, D], span: span(D, D + 1_000) })).toMatchObject({ outcome: 'no_data' });
    expect(judgeOccurrence({ ...base, times: [], span: span(D - 600_000, D - 300_000), now: D + 1 })).toBeUndefined();
    // A hole before the window or after the close changes nothing.
    expect(judgeOccurrence({ ...base, times: [D - 10, D], span: span(D - 7_000_000, D - 3_600_000) })).toMatchObject({ outcome: 'on_time', final: true });
    expect(judgeOccurrence({ ...base, times: [D - 10], span: span(D + 86_400_001, D + 90_000_000) })).toMatchObject({ outcome: 'missing', final: true });
    // A hole after the deadline: late when completed before it; else missing, not final (the hole may have held it).
    expect(judgeOccurrence({ ...base, times: [D - 10, D + 60_000], span: span(D + 3_600_000, D + 7_200_000) })).toMatchObject({ outcome: 'late', final: true, count: 2 });
    expect(judgeOccurrence({ ...base, times: [D - 10, D + 10_000_000], span: span(D + 3_600_000, D + 7_200_000) })).toMatchObject({ outcome: 'missing', final: false, count: 1 });
  });
});
