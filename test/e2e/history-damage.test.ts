import { existsSync, openSync, readdirSync, statSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually, runCli } from '../helpers/daemon-process.js';
import { Scenario, success } from './helpers/e2e-daemon.js';
import { writeStatementLedger } from './helpers/statement-ledger.js';

/**
 * A damaged SQLite history (contract 12a) through the built daemon: the ledger filled from the simulator's history
 * is backed up (verified) after the backfill; the file is then damaged (every page but the first two overwritten)
 * while the daemon is stopped. At the next start the integrity check finds it; the file is moved aside and the
 * backup restored in its place; while the ledger since the backup is judged again from the service history (slowed
 * here), the SLA reads answer 503 with the reason, history_up is 0 and TransferWatchHistoryDamaged fires; then the
 * ledger equals the one before, the alert resolves. `history check` says which file is damaged and lists the backups.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const DAY = 86_400_000;
const occurrencesSchema = z.object({ occurrences: z.array(z.object({ rule: z.string(), key: z.record(z.string(), z.string()), local_date: z.string(), outcome: z.string(), lateness_seconds: z.number().nullable() })) });
const alertsSchema = z.object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), state: z.string() })) });

describe.skipIf(!existsSync(CLI))('a damaged SQLite history', () => {
  it('is found at start, restored from its newest good backup, its ledger judged again, and loud meanwhile', async () => {
    const s = await Scenario.create('history-damage');
    try {
      const { day } = writeStatementLedger(s, { bank1Skips: (back) => back % 3 === 0, extra: { history: { check_interval: '1h', backup: { interval: '1h', keep: 2 } } } });
      const first = await s.start();
      await first.waitForLog((l) => l['msg'] === 'SLA backfill done', 60_000);
      await first.waitForLog((l) => l['msg'] === 'history database backed up (verified)', 30_000);
      const listed = async () =>
        occurrencesSchema
          .parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day(9)}&to=${day(2)}`)).json())
          .occurrences.map((o) => `${o.local_date} ${o.key['user'] ?? ''} ${o.outcome} ${o.lateness_seconds ?? ''}`)
          .sort();
      const before = await listed();
      expect(before).toHaveLength(16);
      expect(before.filter((o) => o.includes('missing'))).toHaveLength(3);
      await first.kill('SIGTERM');

      // Damage: every page after the first two overwritten (the schema page stays: the file still opens).
      const file = join(s.stateDir, 'history.sqlite');
      const size = statSync(file).size;
      const fd = openSync(file, 'r+');
      writeSync(fd, Buffer.alloc(size - 8192, 0xa5), 0, size - 8192, 8192);
      closeSync(fd);
      const checked = await runCli(['history', 'check', '--config', s.configFile]);
      expect(checked.code).toBe(1);
      expect(checked.stdout).toContain(`DAMAGED: ${file}`);
      expect(checked.stdout).toMatch(/backups \(newest first\):\n {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}\S+backups\/history-\d{8}T\d{9}Z\.sqlite/);

      // The next start: found, restored, judged again — slowly here (the service answers late), so it can be seen.
      s.sim.setFaults({ delayMs: 1_500 });
      const second = await s.start();
      await second.waitForLog((l) => String(l['msg']).startsWith('the history database is damaged: moved aside, its newest good backup restored'), 30_000);
      const refused = await fetch(`${s.url}/api/v1/sla/report?from=${day(9)}&to=${day(2)}`);
      expect(refused.status).toBe(503);
      expect(await refused.text()).toContain('restored from its backup of');
      const history = await fetch(`${s.url}/api/v1/history/alerts`);
      expect(history.status).toBe(503);
      expect(await history.text()).toContain('is being repaired from its backup of');
      await eventually(async () => (await s.metric('transfer_watch_history_up')) === 0, 10_000);
      await eventually(async () => alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts.some((a) => a.labels['alertname'] === 'TransferWatchHistoryDamaged'), 20_000, 200);
      s.sim.setFaults({ delayMs: 0 });
      const repaired = await second.waitForLog((l) => String(l['msg']).startsWith('the history database is repaired'), 60_000);
      expect(repaired['lost_span_ms']).toEqual(expect.any(Number));

      // The ledger is the one before; the damaged file is kept aside; the alert resolves, history_up is 1 again.
      expect(await listed()).toEqual(before);
      expect(readdirSync(s.stateDir).some((f) => f.startsWith('history.sqlite.corrupt-'))).toBe(true);
      await eventually(async () => !alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts.some((a) => a.labels['alertname'] === 'TransferWatchHistoryDamaged'), 20_000, 200);
      await eventually(async () => (await s.metric('transfer_watch_history_up')) === 1, 20_000);
    } finally {
      await s.cleanup();
    }
  }, 180_000);

  it('history backup and history restore by hand: the next start judges the ledger since the backup again', async () => {
    const s = await Scenario.create('history-restore');
    try {
      const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
      const day = (back: number) => new Date(today - back * DAY).toISOString().slice(0, 10);
      s.inject([3, 2].map((back) => success(today - back * DAY + 7 * 3_600_000, { USUARIO: 'BANK1', NOMEARQUIVO: `EXTRATO_BANK1_${day(back)}.RET`, INSTANCE: 'PROD01' })));
      s.write({
        rules: [{ name: 'StatementMissing', type: 'missing_file', match: { file: ['EXTRATO_*'] }, deadline: '0 8 * * *', timezone: 'UTC', window: '8h', for_each: { label: 'user', values: ['BANK1'] } }],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        poll: { max_window: '1d' },
        extra: { sla: { backfill: '5d' }, history: { backup: { interval: '1h', keep: 3 } } },
      });
      const first = await s.start();
      await first.waitForLog((l) => l['msg'] === 'SLA backfill done', 60_000);
      await first.kill('SIGTERM');
      const backedUp = await runCli(['history', 'backup', '--config', s.configFile]);
      expect(backedUp.code, backedUp.stderr).toBe(0);
      expect(backedUp.stdout).toMatch(/^backed up to \S+backups\/history-\d{8}T\d{9}Z\.sqlite \(\d+ bytes, verified\)\n$/);
      const restored = await runCli(['history', 'restore', '--config', s.configFile]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toContain('The next start of the daemon judges the SLA ledger since the backup again');
      expect(existsSync(join(s.stateDir, 'history.restored.json'))).toBe(true);
      expect(readdirSync(s.stateDir).some((f) => f.startsWith('history.sqlite.replaced-'))).toBe(true);

      const second = await s.start();
      const repaired = await second.waitForLog((l) => String(l['msg']).startsWith('the history database is repaired'), 60_000);
      expect(repaired['ledger_judged']).toBeGreaterThanOrEqual(1);
      expect(existsSync(join(s.stateDir, 'history.restored.json'))).toBe(false);
      const listed = occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day(3)}&to=${day(2)}`)).json()).occurrences;
      expect(listed.map((o) => `${o.local_date} ${o.outcome}`)).toEqual([`${day(3)} on_time`, `${day(2)} on_time`]);
    } finally {
      await s.cleanup();
    }
  }, 120_000);
});
