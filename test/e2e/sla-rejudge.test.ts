import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, runCli } from '../helpers/daemon-process.js';
import { Scenario } from './helpers/e2e-daemon.js';
import { writeStatementLedger } from './helpers/statement-ledger.js';

/**
 * `sla rejudge` (contract 11c) through the built daemon and CLI: a ledger written by an older version (a day without
 * its file recorded late with the next day's file, the 11c bug) keeps its outcome across an upgrade until an operator
 * asks; `transfer-watch sla rejudge` then re-decides the span from the simulator's history, keeps the excuse given
 * meanwhile, answers what changed, records the event in /api/v1/history/sla, and a second run changes nothing.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const DAY = 86_400_000;
const occurrencesSchema = z.object({
  occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), local_date: z.string(), outcome: z.string(), recorded_outcome: z.string(), lateness_seconds: z.number().nullable(), excuse: z.object({ by: z.string(), reason: z.string() }).nullable() })),
});
const eventsSchema = z.object({ events: z.array(z.looseObject({ event: z.string(), by: z.string(), reason: z.string() })) });
const rejudgedSchema = z.object({ event: z.literal('rejudged'), from: z.string(), to: z.string(), judged: z.number(), changed: z.number(), by: z.string(), reason: z.string() });

describe.skipIf(!existsSync(CLI))('sla rejudge through the built daemon and CLI', () => {
  it('re-decides an old ledger\'s span from the service history on request, keeps the excuse, says what changed, and records it', async () => {
    const s = await Scenario.create('sla-rejudge');
    try {
      // Daily at 08:00 UTC over the 8 hours before. BANK1 sends every day but one (a holiday nobody configured);
      // BANK2 every day, one of them two hours late.
      const holiday = 5;
      const { today, day } = writeStatementLedger(s, { bank1Skips: (back) => back === holiday });
      const first = await s.start();
      await first.waitForLog((l) => l['msg'] === 'SLA backfill done', 60_000);
      const listed = async () => occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day(9)}&to=${day(2)}`)).json()).occurrences;
      const bank1OnHoliday = async () => (await listed()).find((o) => o.key['user'] === 'BANK1' && o.local_date === day(holiday));
      expect(await bank1OnHoliday()).toMatchObject({ outcome: 'missing' });
      await first.kill('SIGTERM');

      // The ledger as an older version wrote it: the holiday late, with the next day's file 23 hours after.
      const file = new Database(join(s.stateDir, 'history.sqlite'));
      const deadline = today - holiday * DAY + 8 * 3_600_000;
      const wrong = file
        .prepare("update sla_occurrences set outcome = 'late', arrived_at = ?, lateness_seconds = ?, count = 1 where rule = 'StatementMissing' and key_text = 'user=BANK1' and deadline = ?")
        .run(deadline + 23 * 3_600_000, 23 * 3_600, deadline);
      file.close();
      expect(wrong.changes).toBe(1);

      // Upgraded: the old outcome stays (never rewritten silently); an excuse is given meanwhile.
      await s.start();
      expect(await bank1OnHoliday()).toMatchObject({ outcome: 'late', lateness_seconds: 82_800 });
      const excused = await runCli(['sla', 'excuse', '--url', s.url, '--rule', 'StatementMissing', '--key', 'user=BANK1', '--date', day(holiday), '--reason', 'bank holiday', '--by', 'ana']);
      expect(excused.code, excused.stderr).toBe(0);

      const rejudged = await runCli(['sla', 'rejudge', '--url', s.url, '--from', day(9), '--to', day(2), '--reason', 'one file, one deadline (11c)', '--by', 'ana']);
      expect(rejudged.code, rejudged.stderr + s.allLogs().split('\n').filter((l) => l.includes('rejudge')).join('\n')).toBe(0);
      expect(rejudged.stdout).toContain(`re-judged 16 occurrence(s) of StatementMissing from ${day(9)} to ${day(2)}: 1 changed`);
      expect(rejudged.stdout).toMatch(new RegExp(`StatementMissing\\s+user=BANK1\\s+${day(holiday)}\\s+${day(holiday)}T08:00:00Z\\s+late\\s+missing`));
      // The truth again, the excuse kept beside it; BANK2's late day as it was.
      expect(await bank1OnHoliday()).toMatchObject({ outcome: 'excused', recorded_outcome: 'missing', lateness_seconds: null, excuse: { by: 'ana', reason: 'bank holiday' } });
      expect((await listed()).find((o) => o.key['user'] === 'BANK2' && o.local_date === day(4))).toMatchObject({ outcome: 'late', lateness_seconds: 7_200 });
      // Recorded in the SLA history: who, why, the span, how many judged and changed.
      const events = eventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/sla`)).json()).events;
      expect(rejudgedSchema.parse(events.find((e) => e.event === 'rejudged'))).toEqual({ event: 'rejudged', from: day(9), to: day(2), judged: 16, changed: 1, by: 'ana', reason: 'one file, one deadline (11c)' });

      // Again: nothing changes. A rule the daemon does not know is refused, naming it.
      const again = await runCli(['sla', 'rejudge', '--url', s.url, '--from', day(9), '--to', day(2), '--format', 'json']);
      expect(z.object({ judged: z.number(), changed: z.number() }).parse(JSON.parse(again.stdout))).toEqual({ judged: 16, changed: 0 });
      const unknown = await runCli(['sla', 'rejudge', '--url', s.url, '--from', day(9), '--to', day(2), '--rule', 'Nope']);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('HTTP 404: no missing_file rule "Nope" is configured');
    } finally {
      await s.cleanup();
    }
  }, 120_000);
});
