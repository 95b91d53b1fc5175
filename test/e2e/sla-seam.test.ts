import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';
import { Scenario, success } from './helpers/e2e-daemon.js';

/**
 * The seam of backfill and live at a first start (issue 44), through the built daemon on SQLite and PostgreSQL: a
 * deadline whose window began before the daemon's first poll and comes after its start is judged (it was never
 * recorded), one that passed before the start without its file is finished live when the file comes (it stayed
 * `missing`), and a first start without backfill writes no `no_data` for windows it never read.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const MINUTE = 60_000;
const occurrencesSchema = z.object({
  occurrences: z.array(z.object({ rule: z.string(), local_date: z.string(), deadline: z.string(), outcome: z.string(), final: z.boolean(), lateness_seconds: z.number().nullable() })),
});

/** A daily cron (UTC) at the minute of `at`. */
function dailyAt(at: number): string {
  const d = new Date(at);
  return `${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

describe.skipIf(!existsSync(CLI)).concurrent.each(BACKENDS)('the seam of backfill and live at a first start (%s)', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('judges the deadline whose window began before the first poll, and finishes live the one the backfill left open', async () => {
    const s = await Scenario.create(`sla-seam-${kind}`);
    const { history } = await backend.config();
    try {
      const now = Date.now();
      // The next whole minute at least 20 s away, and the whole minute at least 3 minutes ago.
      const ahead = Math.ceil((now + 20_000) / MINUTE) * MINUTE;
      const passed = Math.floor((now - 3 * MINUTE) / MINUTE) * MINUTE;
      // Windows of 2 h: they began long before the first poll's look-back (5 minutes).
      s.inject([
        success(now - 30 * MINUTE, { USUARIO: 'AHEAD', NOMEARQUIVO: 'AHEAD.TXT', INSTANCE: 'PROD01' }),
        success(now - 3 * 86_400_000, { USUARIO: 'OTHER', NOMEARQUIVO: 'OTHER.TXT', INSTANCE: 'PROD01' }),
      ]);
      s.write({
        rules: [
          { name: 'SeamAhead', type: 'missing_file', match: { user: ['AHEAD'] }, deadline: dailyAt(ahead), timezone: 'UTC', window: '2h' },
          { name: 'SeamOpen', type: 'missing_file', match: { user: ['OPEN'] }, deadline: dailyAt(passed), timezone: 'UTC', window: '2h', sla: { late_until: '1h' } },
        ],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        extra: { history, sla: { backfill: '2d' } },
      });
      await s.start();
      await s.daemon!.waitForLog((l) => l['msg'] === 'SLA backfill done', 60_000);
      // Dates from the deadlines themselves, never the wall clock's day: around midnight UTC `passed` is yesterday's
      // and `ahead` tomorrow's (the test holds at any hour).
      const utcDate = (t: number): string => new Date(t).toISOString().slice(0, 10);
      const occurrences = async (rule: string) =>
        occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${utcDate(passed)}&to=${utcDate(ahead)}&rule=${rule}`)).json()).occurrences.filter((o) => Date.parse(o.deadline) >= passed);

      // The backfill wrote the passed deadline as missing, still open (it closes 1 h after it).
      expect((await occurrences('SeamOpen')).map((o) => [o.outcome, o.final])).toEqual([['missing', false]]);
      // Its file comes now: within a poll the occurrence is late.
      s.inject([success(Date.now(), { USUARIO: 'OPEN', NOMEARQUIVO: 'OPEN.TXT', INSTANCE: 'PROD01' })]);
      const late = await eventually(async () => (await occurrences('SeamOpen')).find((o) => o.outcome === 'late'), 20_000);
      expect(late.final).toBe(true);
      expect(late.lateness_seconds).toBeGreaterThanOrEqual(3 * 60);

      // The deadline ahead, whose window began before the first poll, is judged once it passes.
      const ahead_ = await eventually(async () => (await occurrences('SeamAhead')).find((o) => Date.parse(o.deadline) === ahead), 90_000);
      expect([ahead_.outcome, ahead_.final]).toEqual(['on_time', true]);

      // Coverage: the 2 days of backfill are judged, the days before them are not monitored, and the report says so.
      const from = utcDate(passed - 4 * 86_400_000);
      const report = z
        .object({ rows: z.array(z.object({ rule: z.string(), on_time: z.number(), late: z.number(), missing: z.number(), monitored_from: z.string().nullable(), due: z.number().nullable(), not_monitored: z.number().nullable(), coverage: z.number().nullable() })) })
        .parse(await (await fetch(`${s.url}/api/v1/sla/report?from=${from}&to=${utcDate(passed)}&rule=SeamOpen`)).json());
      const row = report.rows[0];
      expect(row?.due).toBe(5);
      expect(row?.monitored_from !== null && row!.monitored_from >= utcDate(passed - 3 * 86_400_000)).toBe(true);
      expect(row!.due! - row!.not_monitored!).toBe(row!.on_time + row!.late + row!.missing);
      expect(row!.coverage).toBeLessThan(1);
    } finally {
      await s.cleanup();
    }
  }, 180_000);

  it('writes no no_data for windows a first start without backfill never read', async () => {
    const s = await Scenario.create(`sla-seam-nobackfill-${kind}`);
    const { history } = await backend.config();
    try {
      const passed = Math.floor((Date.now() - 3 * MINUTE) / MINUTE) * MINUTE;
      s.write({
        rules: [{ name: 'NeverRead', type: 'missing_file', match: { user: ['NOBODY'] }, deadline: dailyAt(passed), timezone: 'UTC', window: '2h', sla: { late_until: '1m' } }],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        extra: { history },
      });
      await s.start();
      await s.waitPolledPast(Date.now());
      await new Promise((r) => setTimeout(r, 3_000));
      const from = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
      const to = new Date().toISOString().slice(0, 10);
      const listed = occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${from}&to=${to}`)).json()).occurrences;
      expect(listed).toEqual([]);
    } finally {
      await s.cleanup();
    }
  }, 120_000);
});
