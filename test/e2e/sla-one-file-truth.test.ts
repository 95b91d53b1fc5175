import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI } from '../helpers/daemon-process.js';
import { Scenario, success } from './helpers/e2e-daemon.js';
import { localDate, localDaysBefore, zoned } from './helpers/zoned-days.js';

/**
 * One file, one deadline (contract 11c) against an independent truth, through the built daemon: the simulator serves
 * 85 days of a London daily statement for three partners and a New York weekly file, with the shapes that made one
 * file the evidence of two occurrences before — holidays no configured calendar knows, weeks skipped, two copies of a
 * file, a file at the very instant one occurrence closes and the next one's window opens, a file at the deadline —
 * across both zones' clock changes. The truth is computed here from the plan; the 90-day backfill's ledger is compared
 * with it occurrence by occurrence, and no file may be evidence of two occurrences anywhere in it.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const HOUR = 3_600_000;
const WINDOW = 6 * HOUR;
const WEEKLY_WINDOW = 48 * HOUR;
const FIRST = 85;
const LAST = 3;

const fileSchema = z.object({ file: z.string(), arrived_at: z.string(), source: z.string() });
const occurrencesSchema = z.object({
  occurrences: z.array(
    z.object({
      rule: z.string(),
      key: z.record(z.string(), z.string()),
      local_date: z.string(),
      outcome: z.string(),
      lateness_seconds: z.number().nullable(),
      files: z.array(fileSchema),
      after_close: z.array(fileSchema),
    }),
  ),
});

interface Truth {
  id: string;
  outcome: 'on_time' | 'late' | 'missing';
  lateness: number | null;
}

const nextDate = (date: string): string => new Date(Date.parse(`${date}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

function plan(now: number): { records: ReturnType<typeof success>[]; truth: Truth[]; secondCopies: Array<{ file: string; previousDay: string }> } {
  const records: ReturnType<typeof success>[] = [];
  const truth: Truth[] = [];
  const secondCopies: Array<{ file: string; previousDay: string }> = [];
  const send = (at: number, user: string, file: string) => records.push(success(at, { USUARIO: user, NOMEARQUIVO: file, INSTANCE: 'PROD01' }));
  const cSilent = new Set<number>();
  for (let back = FIRST; back >= LAST; back--) {
    const date = localDaysBefore(now, back, 'Europe/London');
    const deadline = zoned(date, 9, 'Europe/London');
    // The occurrence closes when the next day's window opens (23, 24 or 25 hours after, across a clock change).
    const close = zoned(nextDate(date), 9, 'Europe/London') - WINDOW;
    const id = (key: string) => `StatementMissing/${key}/${date}`;
    // A: a holiday of its own that no calendar knows, three times: missing (its next day is on time, for its own day).
    if (back % 29 === 7) truth.push({ id: id('A'), outcome: 'missing', lateness: null });
    else {
      send(deadline - 2 * HOUR, 'A', `EXT_A_${date}.RET`);
      truth.push({ id: id('A'), outcome: 'on_time', lateness: null });
    }
    // B: late now and then (before the close); on other days on time, sometimes with a second copy in the window.
    if (back % 11 === 3) {
      const minutes = 30 + ((back * 37) % 900);
      send(deadline + minutes * 60_000, 'B', `EXT_B_${date}.RET`);
      truth.push({ id: id('B'), outcome: 'late', lateness: minutes * 60 });
    } else {
      send(deadline - 3 * HOUR, 'B', `EXT_B_${date}.RET`);
      if (back % 5 === 0) {
        send(deadline - HOUR, 'B', `EXT_B_${date}_COPY.RET`);
        if (back < FIRST) secondCopies.push({ file: `EXT_B_${date}_COPY.RET`, previousDay: localDaysBefore(now, back + 1, 'Europe/London') });
      }
      truth.push({ id: id('B'), outcome: 'on_time', lateness: null });
    }
    // C: nothing by the deadline and one file at the very instant the occurrence closes (and the next day's window
    // opens, exclusive): late for this day, and the next day, without a file, missing. Sometimes exactly at the deadline.
    if (cSilent.has(back)) truth.push({ id: id('C'), outcome: 'missing', lateness: null });
    else if (back % 13 === 4 && back > LAST) {
      send(close, 'C', `EXT_C_${date}.RET`);
      truth.push({ id: id('C'), outcome: 'late', lateness: (close - deadline) / 1000 });
      cSilent.add(back - 1);
    } else {
      const at = back % 7 === 2 ? deadline : deadline - HOUR;
      send(at, 'C', `EXT_C_${date}.RET`);
      truth.push({ id: id('C'), outcome: 'on_time', lateness: null });
    }
  }
  // W: a weekly file for Monday 10:00 New York over the two days before; a week skipped now and then (missing: the
  // next week's file is that week's), a late one (Monday 15:00, before the Saturday its occurrence closes).
  let week = 0;
  for (let back = FIRST - 2; back >= LAST; back--) {
    const date = localDaysBefore(now, back, 'America/New_York');
    if (new Date(`${date}T12:00:00Z`).getUTCDay() !== 1) continue;
    const deadline = zoned(date, 10, 'America/New_York');
    const id = `WeeklyPositions//${date}`;
    week++;
    if (week % 4 === 1) truth.push({ id, outcome: 'missing', lateness: null });
    else if (week % 4 === 3) {
      send(deadline + 5 * HOUR, 'W', `POS_W_${date}.CSV`);
      truth.push({ id, outcome: 'late', lateness: 5 * 3_600 });
    } else {
      send(deadline - 22 * HOUR, 'W', `POS_W_${date}.CSV`);
      truth.push({ id, outcome: 'on_time', lateness: null });
    }
  }
  expect(new Set(truth.map((t) => t.id)).size, 'each occurrence planned once').toBe(truth.length);
  return { records, truth, secondCopies };
}

describe.skipIf(!existsSync(CLI))('one file, one deadline: a 90-day ledger against an independent truth', () => {
  it('judges every occurrence as planned, and no file is the evidence of two', async () => {
    const s = await Scenario.create('sla-one-file');
    try {
      const now = Date.now();
      const { records, truth, secondCopies } = plan(now);
      s.inject(records);
      s.write({
        rules: [
          { name: 'StatementMissing', type: 'missing_file', match: { file: ['EXT_*'] }, deadline: '0 9 * * *', timezone: 'Europe/London', window: '6h', for_each: { label: 'user', values: ['A', 'B', 'C'] } },
          { name: 'WeeklyPositions', type: 'missing_file', match: { user: ['W'], file: ['POS_*'] }, deadline: '0 10 * * 1', timezone: 'America/New_York', window: `${WEEKLY_WINDOW / HOUR}h` },
        ],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        poll: { max_window: '1d' },
        extra: { sla: { backfill: '90d' } },
      });
      const d = await s.start();
      await d.waitForLog((l) => l['msg'] === 'SLA backfill done', 120_000);
      const from = localDate(now - 95 * 86_400_000, 'UTC');
      const to = localDate(now, 'UTC');
      const listed = occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${from}&to=${to}&limit=5000`)).json()).occurrences;
      const byId = new Map(listed.map((o) => [`${o.rule}/${o.key['user'] ?? ''}/${o.local_date}`, o]));
      const wrong = truth.flatMap((t) => {
        const o = byId.get(t.id);
        return o && o.outcome === t.outcome && o.lateness_seconds === t.lateness ? [] : [`${t.id}: want ${t.outcome} ${t.lateness ?? ''}, got ${o ? `${o.outcome} ${o.lateness_seconds ?? ''}` : 'nothing'}`];
      });
      expect(wrong).toEqual([]);
      expect(truth.filter((t) => t.outcome === 'missing').length).toBeGreaterThanOrEqual(8);

      // No file is the evidence of two occurrences, anywhere in the ledger; a file after a close that no occurrence
      // took is named with its source, and is nobody's evidence.
      const evidence = listed.flatMap((o) => o.files.map((f) => f.file));
      const twice = evidence.filter((f, i) => evidence.indexOf(f) !== i);
      expect(twice).toEqual([]);
      const afterClose = listed.flatMap((o) => o.after_close);
      expect(afterClose.filter((f) => f.file === '' || f.source !== 'sim')).toEqual([]);
      expect(afterClose.filter((f) => evidence.includes(f.file))).toEqual([]);
      // A second copy in B's window: the previous day's file after its close, named there.
      expect(secondCopies.length).toBeGreaterThan(5);
      for (const copy of secondCopies) {
        expect(byId.get(`StatementMissing/B/${copy.previousDay}`)?.after_close.map((f) => f.file), copy.file).toContain(copy.file);
      }
    } finally {
      await s.cleanup();
    }
  }, 180_000);
});
