import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually } from '../helpers/daemon-process.js';
import { Scenario, success } from '../e2e/helpers/e2e-daemon.js';
import { recordResult } from './harness.js';

/**
 * A backfill window the service cannot serve (issue 53, item 9): it fails in a first life that is killed -9, fails
 * again in a second life (its attempts and its wait carried across: the plan in the history database), and is served
 * in a third. The ledger is then whole: every deadline judged from the history, the one behind the failing window
 * too, no `no_data` left, nothing failing or unread.
 */

const DAY = 86_400_000;
const occurrencesSchema = z.object({ occurrences: z.array(z.object({ local_date: z.string(), outcome: z.string() })) });

/** The attempts of the backfill's windows that failed, as the history database holds them (read beside the daemon). */
function failedAttempts(stateDir: string): number[] {
  const db = new Database(join(stateDir, 'history.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT attempts FROM backfill_windows WHERE records IS NULL AND attempts > 0').all() as Array<{ attempts: number }>).map((r) => r.attempts);
  } finally {
    db.close();
  }
}

describe('reliability: a backfill window failing across two restarts, then healing', () => {
  it('keeps its attempts across kill -9, reads it once served, and leaves the ledger whole', async () => {
    const s = await Scenario.create('rel-backfill-heal');
    try {
      const now = Date.now();
      const today = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
      const day = (back: number) => new Date(today - back * DAY).toISOString().slice(0, 10);
      const truth = new Map<string, string>();
      const records = [];
      for (let back = 12; back >= 2; back--) {
        if (back === 5) truth.set(day(back), 'missing');
        else {
          records.push(success(today - back * DAY + 7 * 3_600_000, { USUARIO: 'BANK1', NOMEARQUIVO: `EXTRATO_BANK1_${day(back)}.RET`, INSTANCE: 'PROD01' }));
          truth.set(day(back), 'on_time');
        }
      }
      s.inject(records);
      s.write({
        rules: [{ name: 'StatementMissing', type: 'missing_file', match: { file: ['EXTRATO_*'] }, deadline: '0 8 * * *', timezone: 'UTC', window: '8h', for_each: { label: 'user', values: ['BANK1'] } }],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        poll: { max_window: '1d' },
        extra: { sla: { backfill: '14d' } },
      });
      // The window holding day 8's statement answers 500 until the end.
      const failing = today - 8 * DAY + 7 * 3_600_000;
      s.sim.setFaults({ failWindows: [{ start: failing, end: failing }] });

      const first = await s.start();
      await eventually(async () => (await s.metric('transfer_watch_sla_backfill_windows', { state: 'failing' })) === 1, 60_000, 200);
      expect(failedAttempts(s.stateDir)).toEqual([1]);
      await first.kill('SIGKILL');

      // Second life: the plan is resumed, the window tried again after its wait, and fails again.
      const second = await s.start();
      await second.waitForLog((l) => l['msg'] === 'SLA backfill: resuming its read (the windows kept are not read again)', 30_000);
      await eventually(() => (failedAttempts(s.stateDir)[0] ?? 0) >= 2, 60_000, 500);
      expect(await s.metric('transfer_watch_sla_backfill_windows', { state: 'failing' })).toBe(1);
      expect(second.logs.some((l) => l['msg'] === 'SLA backfill done')).toBe(false);
      await second.kill('SIGKILL');

      // Third life: the service serves the window again.
      s.sim.setFaults({ failWindows: [] });
      const third = await s.start();
      await third.waitForLog((l) => l['msg'] === 'SLA backfill done', 120_000);
      const listed = occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day(12)}&to=${day(2)}`)).json()).occurrences;
      const got = new Map(listed.map((o) => [o.local_date, o.outcome]));
      const wrong = [...truth].filter(([date, outcome]) => got.get(date) !== outcome).map(([date, outcome]) => `${date}: want ${outcome}, got ${got.get(date) ?? 'nothing'}`);
      recordResult({
        scenario: 'SLA backfill window failing across two kill -9 restarts, then healing',
        faults: 'one window answering 500 in two lives (its attempts and wait kept across kill -9), served in the third',
        expected: truth.size,
        delivered: truth.size - wrong.length,
        duplicated: 0,
        lost: wrong.length,
        falseAlerts: 0,
        ...(wrong.length ? { note: wrong.slice(0, 3).join('; ') } : {}),
      });
      expect(wrong).toEqual([]);
      expect(listed.filter((o) => o.outcome === 'no_data')).toEqual([]);
      expect(await s.metric('transfer_watch_sla_backfill_windows', { state: 'failing' })).toBe(0);
      expect(await s.metric('transfer_watch_sla_backfill_windows', { state: 'unread' })).toBe(0);
    } finally {
      await s.cleanup();
    }
  }, 300_000);
});
