import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually, startDemo } from '../helpers/daemon-process.js';

/** The demo shows /flows: its partner estate's scheduled files, learned from 60 days of history at start. */
describe.skipIf(!existsSync(CLI))('the demo’s flows', () => {
  it('learns the estate’s recurring flows within its first minute and proposes a rule for each', async () => {
    const { url, stop } = await startDemo();
    try {
      const report = await eventually(async () => {
        const body = z
          .object({ flows: z.array(z.object({ user: z.string(), schedule: z.object({ calendar: z.string().nullable() }), watched_by: z.array(z.string()) })) })
          .parse(await (await fetch(`${url}/api/v1/flows`)).json());
        return body.flows.length >= 15 ? body : undefined;
      }, 45_000);
      // The business-day flows skip Brazil's holidays: the demo's calendar is named.
      expect(report.flows.some((f) => f.user.startsWith('BANCO') && f.schedule.calendar === 'BR')).toBe(true);
      // The demo's own partners are there: the banks' daily statements, watched by the shipped rule that alerts on
      // BANK2's this morning (issue 52).
      const watched = report.flows.filter((f) => f.watched_by.length > 0);
      expect(watched.map((f) => [f.user, f.watched_by])).toEqual([
        ['BANK1', ['DailyStatementMissing']],
        ['BANK2', ['DailyStatementMissing']],
        ['BANK3', ['DailyStatementMissing']],
      ]);
      const page = await (await fetch(`${url}/flows`)).text();
      expect(page).toContain('BANCO001');
      expect(page).toMatch(/<strong>BANK2<\/strong>[\s\S]*?DailyStatementMissing/);
      expect(page).toContain('proposed rule');
      expect(await (await fetch(`${url}/api/v1/flows/proposal`)).text()).toMatch(/calendar: BR/);
    } finally {
      stop();
    }
  }, 60_000);
});
