import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startCaptureServer } from '../helpers/capture-server.js';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { MFT_PASSWORD, Scenario, failure, sleep } from './helpers/e2e-daemon.js';
import { slackMessageSchema, webhookPayloadSchema } from './helpers/payloads.js';
import { headerValue, mimeParts, startSmtpCapture } from '../helpers/smtp-capture.js';
import { freePort } from '../helpers/free-port.js';

/**
 * Acceptance of notifications (issue #4): the built `transfer-watch run` with Slack, webhook and email receivers
 * pointed at real capture servers (a real SMTP server with STARTTLS and AUTH), and Debian's Alertmanager binary.
 * Hostile values from the monitored service, a Slack endpoint that first answers 429, and a kill -9 after
 * delivery: each receiver gets each message exactly once, in the contract's format, escaped.
 */

if (!existsSync(CLI)) {
  if (process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first); required when CI=true`);
  console.warn(`e2e notification tests need the built CLI: run "npm run build" (${CLI} is missing)`);
}

const ALERTMANAGER = process.env['ALERTMANAGER_BIN'] ?? '/usr/bin/prometheus-alertmanager';
const HAVE_ALERTMANAGER = existsSync(ALERTMANAGER);
if (!HAVE_ALERTMANAGER && process.env['CI'] !== 'true') {
  console.warn(`skipping the real-Alertmanager e2e test: ${ALERTMANAGER} not found (apt-get install prometheus-alertmanager)`);
}

const SLACK_SECRET = 'XOXSECRETwebhookPATH42';
const SMTP_PASSWORD = 'smtp-Pa55-never-logged';
const HOSTILE_USER = 'EVIL\r\nBcc: victim@evil.example';
const HOSTILE_FILES = ['<!channel>.RET', '<script>alert(1)</script>.RET', 'NAME\r\nX-Injected: yes.RET', 'A&B <@U123>.RET', 'plain.RET'];

const burstRule = (window: string) => ({
  name: 'TransferErrorBurst',
  type: 'error_burst',
  match: { mft_instance: ['PROD*'] },
  group_by: ['mft_instance', 'user'],
  threshold: 5,
  window,
  severity: 'critical',
  annotations: { summary: '{{count}} failed transfers for {{labels.user}} in {{window}}' },
});

function hostileBurst(t: number) {
  return HOSTILE_FILES.map((file, i) =>
    failure(t - 2000 + i * 100, {
      INSTANCE: 'PROD01',
      USUARIO: HOSTILE_USER,
      NOMEARQUIVO: file,
      RESULTADO: 53,
      MENSAGEM: `<!channel> <script>alert(1)</script> & co\r\nX-Injected: yes`,
    }),
  );
}

describe.skipIf(!existsSync(CLI)).concurrent('notifications from transfer-watch run (acceptance, issue #4)', () => {
  it('Slack (429 first), webhook and email get each message exactly once, escaped, nothing repeated after kill -9', async () => {
    const slackAttempts: number[] = [];
    const slack = await startCaptureServer((_req, index) => {
      slackAttempts.push(Date.now());
      return index === 0 ? { status: 429, headers: { 'retry-after': '1', 'content-type': 'text/plain' }, body: 'rate_limited' } : { status: 200, body: 'ok' };
    });
    const hook = await startCaptureServer();
    const s = await Scenario.create('notify');
    const smtp = await startSmtpCapture(s.dir, { username: 'watch', password: SMTP_PASSWORD });
    try {
      const slackUrl = `${slack.url}/services/T000/B000/${SLACK_SECRET}`;
      s.write({
        rules: [burstRule('18s')],
        receivers: [
          {
            name: 'everyone',
            slack: { webhook_url: slackUrl, send_resolved: true },
            webhook: { url: `${hook.url}/hook`, send_resolved: true },
            email: {
              smtp: { host: '127.0.0.1', port: smtp.port, secure: false, require_tls: true, username: 'watch', password: SMTP_PASSWORD, tls: { ca_file: smtp.caFile } },
              from: 'transfer-watch@example.com',
              to: ['ops@example.com'],
              send_resolved: true,
            },
          },
        ],
        route: { receiver: 'everyone', group_by: ['alertname', 'mft_instance', 'user'], group_wait: '500ms', group_interval: '2s', repeat_interval: '1h' },
      });
      const firstDaemonUrl = (await s.start()).url;
      const t = Date.now();
      s.inject(hostileBurst(t));

      await eventually(() => slack.requests.length >= 1 && hook.requests.length >= 1 && smtp.mails.length >= 1, 30_000);
      // "After delivery" as the daemon knows it: each send recorded in its notification log. (Between a
      // receiver's 2xx and that write lies the unavoidable at-least-once window of any HTTP sender.)
      const first = s.daemon!;
      for (const integration of ['slack', 'webhook', 'email']) {
        await first.waitForLog((l) => l['msg'] === 'notification sent' && l['integration'] === integration && l['status'] === 'firing');
      }
      // Slack said 429 with Retry-After: 1 first; the retry waited for it.
      expect(slackAttempts.length).toBeGreaterThanOrEqual(2);
      expect(slackAttempts[1]! - slackAttempts[0]!).toBeGreaterThanOrEqual(900);
      const [firing] = await s.alerts();
      expect(firing?.labels['user']).toBe(HOSTILE_USER);

      // kill -9 after delivery, restart: nothing is sent again.
      await s.daemon!.kill('SIGKILL');
      await s.start();
      await s.waitPolledPast(Date.now());
      const [again] = await s.alerts();
      expect([again?.fingerprint, again?.activeAt]).toEqual([firing?.fingerprint, firing?.activeAt]);
      await sleep(2000);
      expect([slack.requests.length, hook.requests.length, smtp.mails.length]).toEqual([1, 1, 1]);

      // Firing messages, in the contract's format and escaped for each channel.
      const slackFiring = slackMessageSchema.parse(JSON.parse(slack.requests[0]!.body));
      expect(slack.requests[0]!.url).toBe(`/services/T000/B000/${SLACK_SECRET}`);
      expect(slackFiring.text.startsWith('[FIRING:1] TransferErrorBurst')).toBe(true);
      const slackAll = JSON.stringify(slackFiring);
      expect(slackAll).not.toContain('<!channel>');
      expect(slackAll).not.toContain('<@U123>');
      expect(slackAll).not.toContain('<script>');
      expect(slackAll).toContain('&lt;!channel&gt;');
      expect(slackAll).toContain('&amp;');
      expect(slackAll).toContain('5 failed transfers');

      const hookFiring = webhookPayloadSchema.parse(JSON.parse(hook.requests[0]!.body));
      expect(hookFiring).toMatchObject({ version: '4', status: 'firing', receiver: 'everyone' });
      expect(hookFiring.alerts).toHaveLength(1);
      expect(hookFiring.alerts[0]!.labels).toMatchObject({ alertname: 'TransferErrorBurst', user: HOSTILE_USER, mft_instance: 'PROD01' });
      expect(hookFiring.alerts[0]!.fingerprint).toBe(firing?.fingerprint);
      // Links name the port the (first) daemon was bound to (server.listen says port 0).
      expect(hookFiring.externalURL).toBe(firstDaemonUrl);
      expect(hookFiring.alerts[0]!.generatorURL?.startsWith(`${firstDaemonUrl}/`)).toBe(true);
      expect(slackAll).toContain(`<${firstDaemonUrl}|transfer-watch>`);

      const mail = smtp.mails[0]!;
      expect(mail.secure).toBe(true); // STARTTLS happened
      expect(mail.user).toBe('watch');
      expect(mail.to).toEqual(['ops@example.com']);
      expect(headerValue(mail.headers, 'subject')?.startsWith('[FIRING:1] TransferErrorBurst')).toBe(true);
      expect(headerValue(mail.headers, 'bcc')).toBeUndefined();
      expect(headerValue(mail.headers, 'x-injected')).toBeUndefined();
      expect(headerValue(mail.headers, 'content-type')).toMatch(/^multipart\/alternative/);
      const parts = mimeParts(mail.raw);
      expect([...parts.keys()].sort()).toEqual(['text/html', 'text/plain']);
      expect(parts.get('text/plain')).toContain('[FIRING] TransferErrorBurst');
      const html = parts.get('text/html') ?? '';
      expect(html).not.toContain('<script>');
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');

      // The burst leaves its 18 s window: one resolved message each, and nothing more.
      await eventually(() => slack.requests.length >= 2 && hook.requests.length >= 2 && smtp.mails.length >= 2, 45_000);
      await sleep(2500);
      expect([slack.requests.length, hook.requests.length, smtp.mails.length]).toEqual([2, 2, 2]);
      expect(slackMessageSchema.parse(JSON.parse(slack.requests[1]!.body)).text.startsWith('[RESOLVED] TransferErrorBurst')).toBe(true);
      const hookResolved = webhookPayloadSchema.parse(JSON.parse(hook.requests[1]!.body));
      expect(hookResolved.status).toBe('resolved');
      expect(hookResolved.alerts.map((a) => [a.fingerprint, a.status])).toEqual([[firing?.fingerprint, 'resolved']]);
      expect(headerValue(smtp.mails[1]!.headers, 'subject')?.startsWith('[RESOLVED] TransferErrorBurst')).toBe(true);

      // Secrets never in logs or the status API.
      const exposed = `${s.allLogs()}\n${await s.statusText()}\n${JSON.stringify(await s.alerts())}`;
      for (const secret of [SLACK_SECRET, SMTP_PASSWORD, MFT_PASSWORD]) expect(exposed).not.toContain(secret);
    } finally {
      await s.cleanup();
      await Promise.all([slack.close(), hook.close(), smtp.close()]);
    }
  }, 120_000);

  it.skipIf(!HAVE_ALERTMANAGER && process.env['CI'] !== 'true')(
    'the real Alertmanager receives the alert and then its resolution',
    async () => {
      if (!HAVE_ALERTMANAGER) throw new Error(`${ALERTMANAGER} not found: install Debian's prometheus-alertmanager (required when CI=true)`);
      const s = await Scenario.create('am');
      const am = await startAlertmanager(s.dir);
      try {
        s.write({
          rules: [burstRule('15s')],
          receivers: [{ name: 'am', alertmanager: { url: am.url, resend_interval: '2s' } }],
          route: { receiver: 'am', group_by: ['alertname'], group_wait: '500ms', group_interval: '2s', repeat_interval: '1h' },
        });
        await s.start();
        s.inject(hostileBurst(Date.now()));
        const [firing] = await eventually(async () => {
          const alerts = await s.alerts();
          return alerts.length === 1 ? alerts : undefined;
        });
        const arrived = await eventually(async () => (await am.alerts()).find((a) => a.labels['alertname'] === 'TransferErrorBurst'), 30_000);
        expect(arrived.labels).toMatchObject({ user: HOSTILE_USER, mft_instance: 'PROD01', severity: 'critical' });
        expect(arrived.status.state).toBe('active');
        expect(arrived.annotations['summary']).toBe(`5 failed transfers for ${HOSTILE_USER} in 15s`);
        expect(Date.parse(arrived.startsAt)).toBe(Date.parse(firing!.activeAt));
        expect(arrived.generatorURL).toContain(firing!.fingerprint);
        expect(arrived.generatorURL.startsWith(`${s.url}/`)).toBe(true);

        // Resolved: Alertmanager no longer lists it as active.
        await eventually(async () => (await s.alerts()).length === 0, 45_000);
        await eventually(async () => !(await am.alerts()).some((a) => a.labels['alertname'] === 'TransferErrorBurst'), 20_000);
      } finally {
        await am.close();
        await s.cleanup();
      }
    },
    120_000,
  );
});

const amAlertSchema = z.object({
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  startsAt: z.string(),
  endsAt: z.string(),
  generatorURL: z.string(),
  status: z.object({ state: z.string() }),
});

/** Debian's Alertmanager on free ports with its own storage; no cluster. */
async function startAlertmanager(dir: string): Promise<{ url: string; alerts(): Promise<z.infer<typeof amAlertSchema>[]>; close(): Promise<void> }> {
  const config = join(dir, 'alertmanager.yml');
  writeFileSync(config, 'route:\n  receiver: "null"\nreceivers:\n  - name: "null"\n');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    ALERTMANAGER,
    [`--config.file=${config}`, `--storage.path=${join(dir, 'am-data')}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    await eventually(async () => (await fetch(`${url}/-/ready`)).ok, 30_000);
  } catch (err) {
    await close();
    throw new Error(`Alertmanager did not become ready: ${String(err)}\n${output.slice(-2000)}`);
  }
  return {
    url,
    alerts: async () => z.array(amAlertSchema).parse(await (await fetch(`${url}/api/v2/alerts`)).json()),
    close,
  };
}
