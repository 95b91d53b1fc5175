import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { latenessText } from '../../src/sla/lateness-text.js';
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../src/util/format-time.js';
import { startCaptureServer } from '../helpers/capture-server.js';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { MFT_PASSWORD, Scenario, dailyCronAt, failure, secondAfter, sleep, success, until } from './helpers/e2e-daemon.js';
import { webhookPayloadSchema } from './helpers/payloads.js';

/**
 * Acceptance of the daemon (issue #3): the built `transfer-watch run` as a child process against the simulator
 * serving exactly the injected records, alerts checked through /api/v1/alerts and a real webhook receiver.
 * The scenarios are independent (own simulator, daemon, state dir) and run concurrently.
 */

if (!existsSync(CLI)) {
  if (process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first); required when CI=true`);
  console.warn(`e2e daemon tests need the built CLI: run "npm run build" (${CLI} is missing)`);
}

const WEBHOOK_ROUTE = { receiver: 'hook', group_by: ['alertname', 'mft_instance', 'user'], group_wait: '500ms', group_interval: '2s', repeat_interval: '1h' };

describe.skipIf(!existsSync(CLI)).concurrent('transfer-watch run (acceptance, issue #3)', () => {
  it('error bursts fire for the right groups only; kill -9, SIGTERM and restarts keep identity and activeAt without duplicates', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('burst');
    try {
      s.write({
        rules: [
          {
            name: 'TransferErrorBurst',
            type: 'error_burst',
            match: { mft_instance: ['PROD*'], event: ['reception'] },
            group_by: ['mft_instance', 'user'],
            threshold: 5,
            window: '10m',
            severity: 'critical',
            annotations: { summary: '{{count}} failed transfers for {{labels.user}} in {{window}}' },
          },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: WEBHOOK_ROUTE,
      });
      await s.start();
      const t = Date.now();
      s.inject([
        // 5 for BANK1 on PROD01: fires.
        ...[0, 1, 2, 3, 4].map((i) => failure(t - 2000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK1', NOMEARQUIVO: `B1_${i}.RET` })),
        // 4 for BANK2 on PROD01: one short.
        ...[0, 1, 2, 3].map((i) => failure(t - 2000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK2', NOMEARQUIVO: `B2_${i}.RET` })),
        // 6 for BANK1 on TEST01: not matched (instance).
        ...[0, 1, 2, 3, 4, 5].map((i) => failure(t - 2000 + i * 100, { INSTANCE: 'TEST01', USUARIO: 'BANK1', NOMEARQUIVO: `T_${i}.RET` })),
        // 5 transmissions failing for BANK4: not matched (event).
        ...[0, 1, 2, 3, 4].map((i) => failure(t - 2000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK4', EVENTO: 5, NOMEARQUIVO: `X_${i}.REM` })),
        // 6 successes for BANK3: not failures.
        ...[0, 1, 2, 3, 4, 5].map((i) => success(t - 2000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK3', NOMEARQUIVO: `OK_${i}.RET` })),
      ]);

      await eventually(async () => (await s.alerts()).some((a) => a.state === 'firing'));
      await s.waitPolledPast(t + 500);
      const alerts = await s.alerts();
      expect(alerts.map((a) => a.labels)).toEqual([
        { alertname: 'TransferErrorBurst', severity: 'critical', mft_instance: 'PROD01', user: 'BANK1' },
      ]);
      expect(alerts).toHaveLength(1);
      const first = alerts[0]!;
      expect(first.annotations['summary']).toBe('5 failed transfers for BANK1 in 10m');

      await eventually(() => hook.requests.length >= 1);
      const fired = webhookPayloadSchema.parse(JSON.parse(hook.requests[0]!.body));
      expect(fired.version).toBe('4');
      expect(fired.status).toBe('firing');
      expect(fired.alerts.map((a) => a.labels['user'])).toEqual(['BANK1']);
      expect(fired.alerts[0]!.fingerprint).toBe(first.fingerprint);

      // kill -9 right after delivery (the send is in the daemon's notification log): same identity and start
      // time, nothing sent again.
      await s.daemon!.waitForLog((l) => l['msg'] === 'notification sent' && l['status'] === 'firing');
      await s.daemon!.kill('SIGKILL');
      await s.start();
      await s.waitPolledPast(Date.now());
      const afterKill = await s.alerts();
      expect(afterKill.map((a) => [a.fingerprint, a.activeAt, a.state])).toEqual([[first.fingerprint, first.activeAt, 'firing']]);

      // SIGTERM: exit 0 within 10 s, state flushed.
      const stopping = s.daemon!;
      const code = await Promise.race([stopping.kill('SIGTERM'), sleep(10_000).then(() => 'still running after 10 s')]);
      expect(code).toBe(0);
      expect(stopping.logs.some((l) => l['msg'] === 'stopped'), JSON.stringify(stopping.logs.slice(-4))).toBe(true);
      expect(readdirSync(s.stateDir).length).toBeGreaterThan(0);
      await s.start();
      const afterTerm = await s.alerts();
      expect(afterTerm.map((a) => [a.fingerprint, a.activeAt, a.state])).toEqual([[first.fingerprint, first.activeAt, 'firing']]);
      // group_wait + group_interval have passed since the restarts: still the one message.
      await sleep(2500);
      expect(hook.requests).toHaveLength(1);
      expect(s.allLogs()).not.toContain(MFT_PASSWORD);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 120_000);

  it('an alert that resolves after a kill -9 and restart is notified resolved exactly once', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('resolve');
    try {
      s.write({
        rules: [
          // Short, so the burst leaves the window (and the alert resolves) soon after the restart.
          { name: 'TransferErrorBurst', type: 'error_burst', group_by: ['user'], threshold: 3, window: '15s', severity: 'critical' },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: WEBHOOK_ROUTE,
      });
      await s.start();
      const t = Date.now();
      s.inject([0, 1, 2].map((i) => failure(t - 1500 + i * 100, { USUARIO: 'BANK5', NOMEARQUIVO: `R_${i}.RET` })));
      await s.daemon!.waitForLog((l) => l['msg'] === 'notification sent' && l['status'] === 'firing');
      const [first] = await s.alerts();
      await s.daemon!.kill('SIGKILL');
      await s.start();

      await eventually(() => hook.requests.length >= 2, 40_000);
      await sleep(2000);
      const sent = hook.requests.map((r) => webhookPayloadSchema.parse(JSON.parse(r.body)));
      expect(sent.map((p) => p.status)).toEqual(['firing', 'resolved']);
      expect(sent[1]!.alerts.map((a) => [a.fingerprint, a.status, a.startsAt])).toEqual([[first?.fingerprint, 'resolved', first?.activeAt]]);
      expect(await s.alerts()).toEqual([]);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 120_000);

  it('missing_file fires after its deadline and resolves when the file arrives late, saying when', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('missing');
    try {
      const deadline = secondAfter(9000);
      s.write({
        rules: [
          {
            name: 'DailyStatementMissing',
            type: 'missing_file',
            match: { user: ['BANK1'], event: ['reception'], file: ['EXTRATO_*.RET'] },
            deadline: dailyCronAt(deadline),
            timezone: 'UTC',
            window: '1m',
            severity: 'warning',
          },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: { ...WEBHOOK_ROUTE, group_by: ['alertname'] },
      });
      await s.start();
      const t = Date.now();
      s.inject([
        // Near misses: another user, a failed transfer, another file name.
        success(t - 1000, { USUARIO: 'BANK2', NOMEARQUIVO: 'EXTRATO_1.RET' }),
        failure(t - 1000, { USUARIO: 'BANK1', NOMEARQUIVO: 'EXTRATO_1.RET' }),
        success(t - 1000, { USUARIO: 'BANK1', NOMEARQUIVO: 'OTHER_1.RET' }),
      ]);
      const firing = await eventually(async () => (await s.alerts()).find((a) => a.labels['alertname'] === 'DailyStatementMissing'), 30_000);
      expect(firing.state).toBe('firing');
      expect(Date.parse(firing.activeAt)).toBeGreaterThanOrEqual(deadline);
      expect(firing.labels).toMatchObject({ alertname: 'DailyStatementMissing', severity: 'warning', source: 'sim' });
      await eventually(() => hook.requests.length >= 1);
      expect(webhookPayloadSchema.parse(JSON.parse(hook.requests[0]!.body)).status).toBe('firing');

      // Occurred after the deadline (a record from before it that shows up late is not "arrived late").
      await until(deadline + 1500);
      const arrivedAt = Math.floor(Date.now() / 1000) * 1000;
      s.inject([success(arrivedAt, { USUARIO: 'BANK1', NOMEARQUIVO: 'EXTRATO_20260101.RET' })]);
      await eventually(() => hook.requests.length >= 2);
      const resolved = webhookPayloadSchema.parse(JSON.parse(hook.requests[1]!.body));
      expect(resolved.status).toBe('resolved');
      const alert = resolved.alerts[0]!;
      expect(alert.fingerprint).toBe(firing.fingerprint);
      expect(alert.annotations['resolution']).toBe(
        `arrived late at ${formatTime(arrivedAt, 'UTC')} (deadline ${formatTime(deadline, 'UTC')}, ${latenessText((arrivedAt - deadline) / 1000)})`,
      );
      expect(await s.alerts()).toEqual([]);
      await sleep(2500);
      expect(hook.requests).toHaveLength(2);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 120_000);

  it('an outage across a deadline gives TransferWatchSourceDown and no false missing-file alert; once back, the rule decides', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('outage');
    try {
      // Room for a start and a first poll on a loaded 2-core machine (a CI pass of every file at once took over 8 s).
      const deadline = secondAfter(16_000);
      const expected = (name: string, file: string) => ({
        name,
        type: 'missing_file',
        match: { user: ['BANK1'], file: [file] },
        deadline: dailyCronAt(deadline),
        timezone: 'UTC',
        window: '1m',
      });
      s.write({
        rules: [expected('StatementArrived', 'A_*.RET'), expected('StatementNeverArrived', 'B_*.RET')],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: { ...WEBHOOK_ROUTE, group_by: ['alertname'] },
        poll: { stale_after: '2s' },
      });
      await s.start();
      await s.waitPolledPast(Date.now());
      expect(Date.now(), 'the daemon took too long to start for the planned deadline').toBeLessThan(deadline - 3000);
      // The file arrives in time, but the service is down from before until after the deadline.
      s.inject([success(deadline - 2000, { USUARIO: 'BANK1', NOMEARQUIVO: 'A_1.RET' })]);
      s.sim.setFaults({ down: true });

      const down = await eventually(async () => (await s.alerts()).find((a) => a.labels['alertname'] === 'TransferWatchSourceDown'));
      expect(down.labels).toMatchObject({ source: 'sim', severity: 'critical' });
      await until(deadline + 3000);
      const during = await s.alerts();
      expect(during.map((a) => a.labels['alertname'])).toEqual(['TransferWatchSourceDown']);

      s.sim.setFaults({ down: false });
      await eventually(async () => {
        const names = (await s.alerts()).map((a) => a.labels['alertname']);
        return names.length === 1 && names[0] === 'StatementNeverArrived';
      });
      await s.waitPolledPast(deadline + 1000);
      expect((await s.alerts()).map((a) => a.labels['alertname'])).toEqual(['StatementNeverArrived']);

      await eventually(() => hook.requests.some((r) => r.body.includes('StatementNeverArrived')));
      await sleep(1000);
      const sent = hook.requests.map((r) => webhookPayloadSchema.parse(JSON.parse(r.body)));
      const firingNames = sent.filter((p) => p.status === 'firing').flatMap((p) => p.alerts.map((a) => a.labels['alertname']));
      expect(firingNames).toContain('TransferWatchSourceDown');
      expect(firingNames).toContain('StatementNeverArrived');
      expect(firingNames).not.toContain('StatementArrived');
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 120_000);

  it('SIGHUP with a broken config keeps the last good one and says why; a fixed config and POST /-/reload apply', async () => {
    const s = await Scenario.create('reload');
    try {
      const burst = (name: string, user: string, threshold: number) => ({
        name,
        type: 'error_burst',
        match: { user: [user] },
        group_by: ['user'],
        threshold,
        window: '5m',
      });
      const route = { receiver: 'stdout', group_by: ['alertname'], group_wait: '500ms' };
      s.write({ rules: [burst('BurstBank7', 'BANK7', 3)], receivers: [{ name: 'stdout', console: {} }], route });
      const d = await s.start();
      expect(await s.metric('transfer_watch_config_last_reload_successful')).toBe(1);

      writeFileSync(s.configFile, `${readFileSync(s.configFile, 'utf8')}\npoll_typo: 1\n`);
      d.proc.kill('SIGHUP');
      const failed = await d.waitForLog((l) => l['msg'] === 'reload failed; keeping the last good configuration');
      expect(JSON.stringify(failed['err'])).toContain('poll_typo');
      const status = await s.status();
      expect(status.config?.lastReloadSuccessful).toBe(false);
      expect(status.config?.lastReloadError).toContain('poll_typo');
      expect(await s.metric('transfer_watch_config_last_reload_successful')).toBe(0);

      // The last good configuration still runs.
      const t = Date.now();
      s.inject([0, 1, 2].map((i) => failure(t - 1000 + i, { USUARIO: 'BANK7', NOMEARQUIVO: `F${i}.RET` })));
      await eventually(async () => (await s.alerts()).some((a) => a.labels['alertname'] === 'BurstBank7'));

      // Fixed config with a new rule; applied through the HTTP endpoint.
      s.write({ rules: [burst('BurstBank7', 'BANK7', 3), burst('BurstBank8', 'BANK8', 1)], receivers: [{ name: 'stdout', console: {} }], route });
      const res = await fetch(`${s.url}/-/reload`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect((await s.status()).config?.lastReloadSuccessful).toBe(true);
      expect(await s.metric('transfer_watch_config_last_reload_successful')).toBe(1);
      s.inject([failure(Date.now() - 500, { USUARIO: 'BANK8', NOMEARQUIVO: 'G.RET' })]);
      await eventually(async () => (await s.alerts()).some((a) => a.labels['alertname'] === 'BurstBank8'));
      const names = (await s.alerts()).map((a) => `${a.labels['alertname']}/${a.labels['user']}`).sort();
      expect(names).toEqual(['BurstBank7/BANK7', 'BurstBank8/BANK8']);

      // A source renamed by a reload: one node applies it at once, as a cluster of one gives a lease back and takes
      // a new one. The old source's poller commits its last window; the new one is polled from its first start.
      writeFileSync(s.configFile, readFileSync(s.configFile, 'utf8').replace(/name: sim\n/, 'name: sim2\n'));
      expect((await fetch(`${s.url}/-/reload`, { method: 'POST' })).status).toBe(200);
      const handedOver = await d.waitForLog((l) => l['msg'] === 'stopped polling this source; its last window is committed');
      expect(handedOver).toMatchObject({ source: 'sim', lease: 'source:sim' });
      await d.waitForLog((l) => l['msg'] === 'polling this source (its lease is ours)' && l['source'] === 'sim2');
      await eventually(async () => {
        const st = await s.status();
        return st.sources.length === 1 && st.sources[0]?.name === 'sim2' && st.sources[0].up && st.sources[0].streams.every((x) => x.cursor !== null);
      }, 20_000);
      s.inject([failure(Date.now() - 500, { USUARIO: 'BANK8', NOMEARQUIVO: 'H.RET' })]);
      await s.waitPolledPast(Date.now());
      expect(d.logs.filter((l) => /shutdown/.test(String(l['msg'])))).toEqual([]);
      expect((await s.alerts()).some((a) => a.labels['alertname'] === 'TransferWatchSourceDown' && a.labels['source'] === 'sim2')).toBe(false);
    } finally {
      await s.cleanup();
    }
  }, 120_000);
});
