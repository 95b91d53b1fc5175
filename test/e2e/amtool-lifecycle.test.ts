import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startCaptureServer } from '../helpers/capture-server.js';
import { CLI, eventually, startDemo } from '../helpers/daemon-process.js';
import { Scenario, failure, sleep } from './helpers/e2e-daemon.js';
import { webhookPayloadSchema } from './helpers/payloads.js';

/**
 * The truthful lifecycle through the built binary, driven by Debian's real `amtool` against transfer-watch's
 * Alertmanager API v2: an alert notified once, then silenced (amtool silence add) sends nothing; the silence
 * expired (amtool silence expire) sends nothing before repeat_interval; the burst ending sends one RESOLVED
 * naming its labels. amtool's alert and silence queries see what the daemon sees.
 */

const AMTOOL = process.env['AMTOOL_BIN'] ?? '/usr/bin/amtool';
const HAVE_AMTOOL = existsSync(AMTOOL);
if (!HAVE_AMTOOL) {
  if (process.env['CI'] === 'true') throw new Error(`${AMTOOL} not found; .ci/run installs prometheus-alertmanager (which ships amtool)`);
  console.warn(`skipping the amtool e2e test: ${AMTOOL} not found (apt-get install prometheus-alertmanager)`);
}

const run = promisify(execFile);

async function amtool(url: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(AMTOOL, [`--alertmanager.url=${url}`, ...args], { timeout: 20_000 });
  return stdout;
}

const amAlertSchema = z.object({
  labels: z.record(z.string(), z.string()),
  fingerprint: z.string(),
  receivers: z.array(z.object({ name: z.string() })),
  status: z.object({ state: z.enum(['active', 'suppressed', 'unprocessed']), silencedBy: z.array(z.string()), inhibitedBy: z.array(z.string()) }),
});
const amSilenceSchema = z.object({ id: z.string(), status: z.object({ state: z.string() }), createdBy: z.string(), comment: z.string() });

describe.skipIf(!existsSync(CLI) || !HAVE_AMTOOL)('amtool against transfer-watch, and the notification lifecycle (issue 13)', () => {
  it('silenced after its first notification: nothing; expired: nothing before repeat_interval; resolved: one RESOLVED with its labels', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('amtool');
    try {
      s.write({
        rules: [
          {
            name: 'TransferErrorBurst',
            type: 'error_burst',
            match: { mft_instance: ['PROD*'] },
            group_by: ['mft_instance', 'user'],
            threshold: 3,
            window: '25s',
            severity: 'critical',
            annotations: { summary: '{{count}} failed transfers for {{labels.user}} in {{window}}', runbook_url: '/runbooks/TransferErrorBurst' },
          },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook`, send_resolved: true } }],
        route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '2s', repeat_interval: '1h' },
      });
      const t = Date.now();
      s.inject([0, 1, 2].map((i) => failure(t - 3000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK1', NOMEARQUIVO: `PAY_${i}.RET` })));
      await s.start();
      const payloads = () => hook.requests.map((r) => webhookPayloadSchema.parse(JSON.parse(r.body)));
      await eventually(async () => hook.requests.length >= 1, 20_000);
      const first = payloads()[0];
      expect(first?.status).toBe('firing');
      expect(first?.alerts[0]?.labels).toMatchObject({ alertname: 'TransferErrorBurst', user: 'BANK1' });
      // A relative runbook_url is sent as a link on the daemon's own address.
      expect(first?.alerts[0]?.annotations['runbook_url']).toBe(`${s.url}/runbooks/TransferErrorBurst`);

      const active = z.array(amAlertSchema).parse(JSON.parse(await amtool(s.url, 'alert', 'query', '-o', 'json')));
      expect(active.map((a) => [a.labels['user'], a.status.state, a.receivers[0]?.name])).toEqual([['BANK1', 'active', 'hook']]);

      const id = (await amtool(s.url, 'silence', 'add', 'user=BANK1', 'alertname=TransferErrorBurst', '--author=alice', '--comment=bank maintenance', '--duration=1h')).trim();
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const silences = z.array(amSilenceSchema).parse(JSON.parse(await amtool(s.url, 'silence', 'query', '-o', 'json')));
      expect(silences.map((x) => [x.id, x.status.state, x.createdBy, x.comment])).toEqual([[id, 'active', 'alice', 'bank maintenance']]);
      expect(await amtool(s.url, 'silence', 'query', '-q')).toBe(`${id}\n`);
      // Muted: no longer an active alert for amtool, but listed with --silenced, suppressed by this silence.
      expect(JSON.parse(await amtool(s.url, 'alert', 'query', '-o', 'json'))).toEqual([]);
      const silenced = z.array(amAlertSchema).parse(JSON.parse(await amtool(s.url, 'alert', 'query', '--silenced', '-o', 'json')));
      expect(silenced.map((a) => [a.labels['user'], a.status.state, a.status.silencedBy])).toEqual([['BANK1', 'suppressed', [id]]]);

      // Several group intervals pass: the receiver hears nothing (not "resolved", not anything).
      await sleep(6_000);
      expect(hook.requests).toHaveLength(1);

      await amtool(s.url, 'silence', 'expire', id);
      expect(await amtool(s.url, 'silence', 'query', '-q')).toBe('');
      // Still firing, unchanged: not re-sent before repeat_interval (1h).
      await sleep(5_000);
      expect(hook.requests).toHaveLength(1);

      // The failures leave the 25 s window: the burst ends, and the receiver hears exactly that, once.
      await eventually(async () => hook.requests.length >= 2, 40_000);
      await sleep(3_000);
      expect(hook.requests).toHaveLength(2);
      const last = payloads()[1];
      expect(last?.status).toBe('resolved');
      expect(last?.alerts.map((a) => [a.status, a.labels['user'], a.labels['mft_instance']])).toEqual([['resolved', 'BANK1', 'PROD01']]);
      // The figures at resolution, not the last firing count.
      expect(last?.alerts[0]?.annotations['summary']).toMatch(/^[0-2] failed transfers for BANK1 in 25s$/);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 120_000);
});

describe.skipIf(!existsSync(CLI) || !HAVE_AMTOOL)('amtool against the demo, whose clock runs in a simulated morning', () => {
  it('adds a silence with amtool’s defaults (wall-clock times), shows it active with wall-clock times, and expires it; alerts on the demo’s one clock; errors are readable', async () => {
    const { url, stop } = await startDemo();
    try {
      // The demo's simulated morning is hours away from now whenever this runs but at 07:59 in São Paulo.
      const status = z.object({ startedAt: z.string() }).parse(await (await fetch(`${url}/api/v1/status`)).json());

      const before = Date.now();
      const id = (await amtool(url, 'silence', 'add', 'alertname=TransferErrorBurst', 'user=PAYROLL', '--author=alice', '--comment=demo maintenance')).trim();
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const [silence] = z.array(amSilenceSchema.extend({ startsAt: z.string(), endsAt: z.string() })).parse(JSON.parse(await amtool(url, 'silence', 'query', '-o', 'json')));
      expect(silence?.status.state).toBe('active');
      // amtool's default duration (1h) from the wall clock, read back on the wall clock: amtool judges a silence's
      // end by its own clock.
      const endsAt = Date.parse(silence?.endsAt ?? '');
      expect(endsAt).toBeGreaterThanOrEqual(before + 3_600_000 - 5_000);
      expect(endsAt).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
      // The alerts amtool reads are on the demo's clock, as its pages and history are.
      const alerts = z.array(z.object({ startsAt: z.string() })).parse(JSON.parse(await amtool(url, 'alert', 'query', '-o', 'json')));
      for (const a of alerts) expect(Math.abs(Date.parse(a.startsAt) - Date.parse(status.startedAt))).toBeLessThan(10 * 60_000);
      await amtool(url, 'silence', 'expire', id);
      expect(await amtool(url, 'silence', 'query', '-q')).toBe('');

      // Alertmanager's v2 error shape (a JSON string), so amtool prints the reason.
      const bad = await fetch(`${url}/api/v2/silences`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ matchers: [{ name: 'alertname', value: 'X', isRegex: false, isEqual: true }], startsAt: new Date().toISOString(), endsAt: new Date(Date.now() - 60_000).toISOString(), createdBy: 'a', comment: 'c' }),
      });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatch(/endsAt must be after startsAt/);
    } finally {
      stop();
    }
  }, 60_000);
});
