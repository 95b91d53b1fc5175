import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually, runCli } from '../helpers/daemon-process.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';
import { Scenario, success, until } from './helpers/e2e-daemon.js';

/**
 * The SLA ledger (contract section 11) through the built daemon, on SQLite and PostgreSQL: a missing_file rule
 * with a deadline every 20 s and three partners; one on time, one late, one missing. Every occurrence is
 * compared with the truth the test planted, after a kill -9 and a restart; an excuse takes one out of the
 * denominator and comes back out when withdrawn.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const TZ = 'America/Sao_Paulo';
const occurrencesSchema = z.object({
  occurrences: z.array(
    z.object({
      rule: z.string(),
      key: z.record(z.string(), z.string()),
      local_date: z.string(),
      deadline: z.string(),
      outcome: z.string(),
      arrived_at: z.string().nullable(),
      lateness_seconds: z.number().nullable(),
      count: z.number(),
      files: z.array(z.object({ file: z.string(), arrived_at: z.string(), source: z.string() })),
      excuse: z.object({ by: z.string(), reason: z.string() }).nullable(),
    }),
  ),
  next: z.string().nullable(),
});
const reportSchema = z.object({
  rows: z.array(
    z.object({
      rule: z.string(),
      key: z.record(z.string(), z.string()),
      on_time: z.number(),
      late: z.number(),
      missing: z.number(),
      excused: z.number(),
      no_data: z.number(),
      on_time_ratio: z.number().nullable(),
      objective: z.number().nullable(),
      budget_remaining: z.number().nullable(),
    }),
  ),
});

function localDate(ms: number): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: TZ, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
}

describe.skipIf(!existsSync(CLI)).concurrent.each(BACKENDS)('SLA ledger through the built daemon on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('records each occurrence once as on time, late or missing, keeps it across a kill -9, and takes excuses', async () => {
    const s = await Scenario.create(`sla-${kind}`);
    const { history } = await backend.config();
    try {
      s.write({
        rules: [
          {
            name: 'PartnerFileMissing',
            type: 'missing_file',
            deadline: '*/20 * * * * *',
            timezone: TZ,
            window: '15s',
            for_each: { label: 'user', values: ['A', 'B', 'C'] },
            severity: 'warning',
            sla: { objective: 0.5 },
          },
        ],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        extra: { history },
      });
      await s.start();
      // D1: the first deadline at least 8 s ahead; D2 20 s later; D2 closes D1, D3 closes D2.
      const D1 = Math.ceil((Date.now() + 8_000) / 20_000) * 20_000;
      const D2 = D1 + 20_000;
      const D3 = D2 + 20_000;
      s.inject([
        success(D1 - 5_000, { USUARIO: 'A', NOMEARQUIVO: 'A1.RET', INSTANCE: 'PROD01' }),
        success(D1 + 5_000, { USUARIO: 'B', NOMEARQUIVO: 'B1.RET', INSTANCE: 'PROD01' }),
        success(D2 - 3_000, { USUARIO: 'A', NOMEARQUIVO: 'A2.RET', INSTANCE: 'PROD01' }),
        success(D2 - 2_000, { USUARIO: 'B', NOMEARQUIVO: 'B2.RET', INSTANCE: 'PROD01' }),
      ]);
      await until(D3 + 2_500);
      await s.waitPolledPast(D3);
      await s.daemon!.kill('SIGKILL');
      await s.start();

      const day = localDate(D1);
      const truth = new Map([
        [`${D1}/A`, ['on_time', null]],
        [`${D1}/B`, ['late', 5]],
        [`${D1}/C`, ['missing', null]],
        [`${D2}/A`, ['on_time', null]],
        [`${D2}/B`, ['on_time', null]],
        [`${D2}/C`, ['missing', null]],
      ]);
      const read = async () =>
        occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day}&to=${localDate(D3)}&rule=PartnerFileMissing`)).json()).occurrences;
      let seen: unknown;
      const occurrences = await eventually(async () => {
        const list = (await read()).filter((o) => truth.has(`${Date.parse(o.deadline)}/${o.key['user']}`));
        seen = list.map((o) => `${o.deadline} ${o.key['user']} ${o.outcome}`);
        return list.length === truth.size ? list : undefined;
      }, 20_000).catch((err: unknown) => {
        throw new Error(`${String(err)}; D1=${new Date(D1).toISOString()}; recorded: ${JSON.stringify(seen)}; log: ${s.allLogs().split('\n').filter((l) => /history|occurrence|SLA/i.test(l)).slice(-5).join('\n')}`);
      });
      for (const o of occurrences) {
        const [outcome, lateness] = truth.get(`${Date.parse(o.deadline)}/${o.key['user']}`) ?? [];
        expect([o.key['user'], o.outcome, o.lateness_seconds]).toEqual([o.key['user'], outcome, lateness]);
        expect(o.local_date).toBe(localDate(Date.parse(o.deadline)));
        // RFC 3339 with the rule zone's offset (São Paulo: -03:00).
        expect(o.deadline).toMatch(/-03:00$/);
      }
      // The restarted daemon replayed D2 (and D3, not yet closed), decided before the kill: the counter does not move
      // for them again (D2's on-time A and B, and C's missing).
      for (const [user, outcome] of [['A', 'on_time'], ['B', 'on_time'], ['C', 'missing']]) {
        expect(await s.metric('transfer_watch_sla_occurrences_total', { rule: 'PartnerFileMissing', outcome: outcome as string, user: user as string }), `${user} ${outcome}`).toBe(0);
      }
      // The ledger's own figures as gauges, read from the database (the restarted process counted nothing yet).
      // (A's share moves with every deadline; C never sends: 0, and its budget overspent.) They are refreshed every
      // 15 s: occurrences the killed process had not yet written are written by this one after its first refresh.
      await eventually(async () => ((await s.metric('transfer_watch_sla_on_time_ratio', { rule: 'PartnerFileMissing', user: 'C', period: 'current' })) === undefined ? undefined : true), 20_000);
      expect(await s.metric('transfer_watch_sla_on_time_ratio', { rule: 'PartnerFileMissing', user: 'A', period: 'current' })).toBeGreaterThan(0);
      expect(await s.metric('transfer_watch_sla_on_time_ratio', { rule: 'PartnerFileMissing', user: 'C', period: 'current' })).toBe(0);
      expect(await s.metric('transfer_watch_sla_budget_remaining', { rule: 'PartnerFileMissing', user: 'C', period: 'current' })).toBeLessThan(0);
      const late = occurrences.find((o) => o.outcome === 'late');
      expect(late?.files.map((f) => [f.file, f.source])).toEqual([['B1.RET', 'sim']]);
      expect(Date.parse(late?.arrived_at ?? '')).toBe(D1 + 5_000);
      // Each occurrence once: listed by deadline, rule, key, without repeats.
      const ids = (await read()).map((o) => `${o.deadline}/${o.key['user']}`);
      expect(new Set(ids).size).toBe(ids.length);

      // The report agrees with the listing; C is then excused for the day and leaves the denominator.
      const all = await read();
      const count = (user: string, outcome: string) => all.filter((o) => o.key['user'] === user && o.outcome === outcome && o.local_date === day).length;
      const report = async () =>
        reportSchema.parse(await (await fetch(`${s.url}/api/v1/sla/report?from=${day}&to=${day}&rule=PartnerFileMissing`)).json()).rows;
      const rowOf = (rows: z.infer<typeof reportSchema>['rows'], user: string) => rows.find((r) => r.key['user'] === user);
      const before = rowOf(await report(), 'C');
      expect(before?.missing).toBe(count('C', 'missing'));
      // A share to 4 decimals, as a report shows it.
      expect(before?.on_time_ratio).toBe(Math.round((count('C', 'on_time') / (count('C', 'on_time') + count('C', 'late') + count('C', 'missing'))) * 10_000) / 10_000);
      expect(before?.objective).toBe(0.5);
      const rowB = rowOf(await report(), 'B');
      expect(rowB?.late).toBe(count('B', 'late'));

      // The month grid: one row per partner; a day shows its worst occurrence (a deadline every 20 s leaves missing
      // ones every day here), and each of the day's occurrences is in the cell's title.
      const page = await (await fetch(`${s.url}/sla?month=${day.slice(0, 7)}`)).text();
      expect(page.match(/<th scope="row" class="rule">Partner<wbr>File<wbr>Missing/g)).toHaveLength(3);
      expect(page).toMatch(/<td class="day missing"[^>]*><a href="\/api\/v1\/sla\/occurrences\?from=[^"]+">.*✗/);
      expect(page).toMatch(new RegExp(`${day} \\d\\d:\\d\\d UTC late \\(\\+\\d+[smhd]`));
      expect(await (await fetch(`${s.url}/`)).text()).toContain('href="/sla"');

      const excused = await fetch(`${s.url}/api/v1/sla/excuses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rule: 'PartnerFileMissing', key: { user: 'C' }, local_date: day, reason: 'partner holiday', by: 'ana' }),
      });
      expect(excused.status).toBe(201);
      const afterExcuse = rowOf(await report(), 'C');
      expect(afterExcuse?.missing).toBe(0);
      // Every occurrence of the day is excused: those counted before, and the one of a deadline that may have passed
      // since (one every 20 s; a report counts a day's due deadlines, a second or two for this rule).
      const countedBefore = (before?.missing ?? 0) + (before?.on_time ?? 0) + (before?.late ?? 0) + (before?.no_data ?? 0);
      expect(afterExcuse?.excused).toBeGreaterThanOrEqual(countedBefore);
      expect(afterExcuse?.excused).toBeLessThanOrEqual(countedBefore + 1);
      expect((await read()).filter((o) => o.key['user'] === 'C' && o.local_date === day).every((o) => o.outcome === 'excused' && o.excuse?.by === 'ana')).toBe(true);

      // The excuse survives a restart (it lives in the database), then is withdrawn.
      await s.daemon!.kill('SIGKILL');
      await s.start();
      expect(rowOf(await report(), 'C')?.missing).toBe(0);
      const withdrawn = await fetch(`${s.url}/api/v1/sla/excuses?rule=PartnerFileMissing&local_date=${day}&key=user=C`, { method: 'DELETE' });
      expect(withdrawn.status).toBe(200);
      expect(rowOf(await report(), 'C')?.excused).toBe(0);

      // The CLI: the report as a table, occurrences as CSV, an excuse and its withdrawal.
      const cliReport = await runCli(['sla', 'report', '--url', s.url, '--from', day, '--to', day, '--rule', 'PartnerFileMissing']);
      expect(cliReport.code).toBe(0);
      expect(cliReport.stdout.split('\n').filter((l) => l.startsWith('PartnerFileMissing'))).toHaveLength(3);
      const cliCsv = await runCli(['sla', 'occurrences', '--url', s.url, '--from', day, '--to', day, '--outcome', 'late', '--format', 'csv']);
      expect(cliCsv.code).toBe(0);
      expect(cliCsv.stdout.trim().split('\r\n').slice(1).every((l) => l.includes(',late,'))).toBe(true);
      const cliExcuse = await runCli(['sla', 'excuse', '--url', s.url, '--rule', 'PartnerFileMissing', '--date', day, '--key', 'user=B', '--reason', 'bank strike', '--by', 'rui']);
      const [head, ...which] = cliExcuse.stdout.trim().split('\n');
      expect([cliExcuse.code, head]).toEqual([0, `excused PartnerFileMissing user=B on ${day}`]);
      // Which deadlines of the day it took (not on time) and which not (on time), one a line: at least those B had when
      // the ledger was read above (a deadline every 20 s adds more meanwhile).
      expect(which.every((l) => /^ {2}(excused {5}\S+ \((late|missing|no_data)\)|not excused \S+ \(on time\))$/.test(l))).toBe(true);
      expect(which.filter((l) => l.startsWith('  excused')).length).toBeGreaterThanOrEqual(count('B', 'late') + count('B', 'missing') + count('B', 'no_data'));
      expect(which.filter((l) => l.startsWith('  not excused')).length).toBeGreaterThanOrEqual(count('B', 'on_time'));
      expect(rowOf(await report(), 'B')?.late).toBe(0);
      const cliWithdraw = await runCli(['sla', 'excuse', '--url', s.url, '--rule', 'PartnerFileMissing', '--date', day, '--key', 'user=B', '--withdraw']);
      expect(cliWithdraw.code).toBe(0);
      expect(rowOf(await report(), 'B')?.late).toBe(count('B', 'late'));
      // The CLI's JSON carries every field the API answers, not only those its table shows.
      const cliJson = JSON.parse((await runCli(['sla', 'report', '--url', s.url, '--from', day, '--to', day, '--format', 'json'])).stdout) as { created_at?: string; rows: Array<Record<string, unknown>> };
      expect(cliJson.created_at).toMatch(/^\d{4}-/);
      expect(Object.keys(cliJson.rows[0] ?? {})).toEqual(expect.arrayContaining(['lateness_mean_seconds', 'lateness_max_seconds']));
      const cliOccurrences = JSON.parse((await runCli(['sla', 'occurrences', '--url', s.url, '--from', day, '--to', day, '--format', 'json'])).stdout) as { occurrences: Array<Record<string, unknown>> };
      expect(Object.keys(cliOccurrences.occurrences[0] ?? {})).toEqual(expect.arrayContaining(['files', 'timezone', 'count']));
      const cliBad = await runCli(['sla', 'report', '--url', s.url, '--month', '2026-13']);
      expect(cliBad.code).toBe(2);

      // CSV, and bad parameters named.
      const csv = await (await fetch(`${s.url}/api/v1/sla/report?from=${day}&to=${day}&format=csv`)).text();
      expect(csv.split('\r\n')[0]).toBe(
        'period_from,period_to,created_at,rule,key,timezone,on_time,late,missing,excused,no_data,on_time_ratio,objective,budget_remaining,lateness_p95_seconds,lateness_mean_seconds,lateness_max_seconds,monitored_from,due,not_monitored,coverage',
      );
      expect(csv).toContain('PartnerFileMissing,user=A,America/Sao_Paulo,');
      // Each row starts with the period it covers and when the report was made (the daemon's clock).
      expect(csv.split('\r\n')[1]).toMatch(new RegExp(`^${day},${day},\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z,PartnerFileMissing,`));
      const byMonth = z.object({ by: z.literal('month'), rows: z.array(z.object({ month: z.string(), period_from: z.string(), on_time: z.number() })) }).parse(
        await (await fetch(`${s.url}/api/v1/sla/report?from=${day}&to=${day}&by=month`)).json(),
      );
      expect(new Set(byMonth.rows.map((r) => r.month))).toEqual(new Set([day.slice(0, 7)]));
      expect((await fetch(`${s.url}/api/v1/sla/report?from=${day}&to=${day}&by=week`)).status).toBe(400);
      const noFrom = await fetch(`${s.url}/api/v1/sla/report?to=${day}`);
      expect(noFrom.status).toBe(400);
      expect(await noFrom.text()).toContain('from: required');
      expect((await fetch(`${s.url}/api/v1/sla/occurrences?from=2020-01-01&to=2026-12-31`)).status).toBe(400);
      expect((await fetch(`${s.url}/api/v1/sla/occurrences?from=${day}&to=${day}&outcome=lost`)).status).toBe(400);
      const unknownExcuse = await fetch(`${s.url}/api/v1/sla/excuses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rule: 'Nope', key: {}, local_date: day, reason: 'x' }),
      });
      expect(unknownExcuse.status).toBe(404);
    } finally {
      await s.cleanup();
    }
  }, 150_000);
});
