import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServer } from 'node:net';
import { startCaptureServer, type CapturedRequest } from '../helpers/capture-server.js';
import { mimeParts, startSmtpCapture } from '../helpers/smtp-capture.js';
import { startSlackDouble } from '../helpers/slack-double.js';
import { CLI, eventually, runCli } from '../helpers/daemon-process.js';
import { Scenario, failure, sleep } from './helpers/e2e-daemon.js';

/**
 * Contract 14 through the built daemon and CLI: two partners' error bursts fire; `transfer-watch ack` acknowledges
 * one. The acknowledged group is not repeated and not escalated, and its resolution names who acknowledged; the
 * other is repeated and escalated once to the duty manager. The history has the acknowledged and escalated events,
 * `/api/v1/history/oncall` and `history oncall` the figures, `/metrics` the time to acknowledge.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const SMTP_PASSWORD = 'smtp-Pa55-never-logged';
const SLACK_APP_TOKEN = 'xapp-1-A0TEST-1234-never-logged';
const SLACK_WEBHOOK_SECRET = 'XXXXwebhookSecretNeverLogged';

/** A port free now, for a daemon whose external_url must name it before it starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const payloadSchema = z.object({
  status: z.string(),
  escalation: z.object({ step: z.number(), of: z.number(), unacknowledgedSince: z.string(), firstReceiver: z.string() }).optional(),
  alerts: z.array(z.object({ status: z.string(), labels: z.record(z.string(), z.string()), annotations: z.record(z.string(), z.string()) })),
});
type Payload = z.infer<typeof payloadSchema>;
const payloads = (requests: readonly CapturedRequest[]): Payload[] => requests.map((r) => payloadSchema.parse(JSON.parse(r.body)));
const of = (list: readonly Payload[], user: string, status = 'firing'): Payload[] => list.filter((p) => p.status === status && p.alerts.some((a) => a.labels['user'] === user));

const alertsSchema = z.object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), ack: z.object({ by: z.string(), comment: z.string(), at: z.string(), id: z.string() }).optional() })) });
const eventsSchema = z.object({ events: z.array(z.object({ event: z.string(), labels: z.record(z.string(), z.string()), detail: z.record(z.string(), z.union([z.string(), z.number()])).optional() })) });
const oncallSchema = z.object({
  rows: z.array(z.object({ group: z.string(), alerts: z.number(), acknowledged: z.number(), escalated: z.number(), mtta_seconds: z.object({ p50: z.number().nullable() }) })),
});

describe.skipIf(!existsSync(CLI))('on-call: acknowledge and escalate through the daemon', () => {
  it('an ack by the CLI holds repeats and escalation of its group, the other escalates once, and the history measures both', async () => {
    const s = await Scenario.create('oncall');
    const oncall = await startCaptureServer();
    const manager = await startCaptureServer();
    try {
      s.write({
        rules: [{ name: 'PartnerErrors', type: 'error_burst', match: { user: ['BANK*'] }, group_by: ['user'], threshold: 3, window: '25s', severity: 'critical' }],
        receivers: [
          { name: 'oncall', webhook: { url: `${oncall.url}/hook` } },
          { name: 'duty-manager', webhook: { url: `${manager.url}/hook` } },
        ],
        route: { receiver: 'oncall', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '2s', repeat_interval: '5s', escalate: [{ after: '8s', receiver: 'duty-manager' }] },
      });
      await s.start();
      const now = Date.now();
      s.inject(['BANK1', 'BANK2'].flatMap((user) => [0, 1, 2].map((k) => failure(now - 2_000 + k * 100, { USUARIO: user, NOMEARQUIVO: `/in/${user}/RET_${k}.RET` }))));
      await eventually(() => of(payloads(oncall.requests), 'BANK1').length >= 1 && of(payloads(oncall.requests), 'BANK2').length >= 1, 30_000);

      const acked = await runCli(['ack', '--url', s.url, '--filter', 'user="BANK1"', '--comment', 'calling the bank', '--by', 'ana']);
      expect(acked.code, acked.stderr).toBe(0);
      expect(acked.stdout).toMatch(/^\S+: 1 alert acknowledged by ana\n$/);
      const shown = alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts;
      expect(shown.find((a) => a.labels['user'] === 'BANK1')?.ack).toMatchObject({ by: 'ana', comment: 'calling the bank' });
      expect(shown.find((a) => a.labels['user'] === 'BANK2')?.ack).toBeUndefined();
      const ackedAt = Date.now();

      // Past the escalation's delay and two repeat intervals.
      await eventually(() => manager.requests.length >= 1, 30_000);
      await sleep(6_000);
      const toOncall = payloads(oncall.requests);
      const toManager = payloads(manager.requests);
      expect(of(toOncall, 'BANK2').length, 'the group nobody acknowledged is repeated').toBeGreaterThanOrEqual(2);
      expect(of(toOncall, 'BANK1').length, 'the acknowledged group is not repeated').toBe(1);
      expect(toManager.map((p) => [p.alerts.map((a) => a.labels['user']).join(','), p.escalation?.step, p.escalation?.firstReceiver])).toEqual([['BANK2', 1, 'oncall']]);
      expect(Date.parse(toManager[0]?.escalation?.unacknowledgedSince ?? '')).toBeLessThan(ackedAt);

      // BANK1 resolves when its burst leaves the window: told, naming who acknowledged.
      await eventually(() => of(payloads(oncall.requests), 'BANK1', 'resolved').length >= 1, 60_000, 500);
      const resolution = of(payloads(oncall.requests), 'BANK1', 'resolved')[0]?.alerts.find((a) => a.labels['user'] === 'BANK1');
      expect(resolution?.annotations['acknowledged']).toMatch(/^ana at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: calling the bank$/);

      // The history: the alert's timeline has the ack and the escalation; the on-call figures count them.
      await eventually(async () => {
        const events = eventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/alerts?limit=1000`)).json()).events;
        return events.some((e) => e.event === 'acknowledged' && e.labels['user'] === 'BANK1' && e.detail?.['by'] === 'ana') && events.some((e) => e.event === 'escalated' && e.labels['user'] === 'BANK2' && e.detail?.['receiver'] === 'duty-manager');
      }, 30_000, 500);
      const report = oncallSchema.parse(await (await fetch(`${s.url}/api/v1/history/oncall?by=user`)).json());
      const row = (user: string) => report.rows.find((r) => r.group === user);
      expect(row('BANK1')).toMatchObject({ alerts: 1, acknowledged: 1, escalated: 0 });
      expect(row('BANK1')?.mtta_seconds.p50).toBeGreaterThan(0);
      expect(row('BANK2')).toMatchObject({ alerts: 1, acknowledged: 0, escalated: 1 });
      const cli = await runCli(['history', 'oncall', '--url', s.url, '--by', 'user']);
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(/^USER +ALERTS +ACKED +ESCALATED +MTTA P50/m);
      expect(cli.stdout).toMatch(/^BANK2 +1 +0 +1 +- /m);
      expect(await s.metric('transfer_watch_alert_time_to_ack_seconds_count', { alertname: 'PartnerErrors' })).toBe(1);

      // A cross-site write is refused (contract §10), as for silences.
      const crossSite = await fetch(`${s.url}/api/v1/acks`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://evil.example' }, body: JSON.stringify({ matchers: ['user="BANK2"'], by: 'mallory' }) });
      expect(crossSite.status).toBe(403);
      // An ack of nothing firing is a 404 that says so.
      const none = await runCli(['ack', '--url', s.url, '--filter', 'user="NOBODY"', '--by', 'ana']);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('HTTP 404: no firing alert matches');
    } finally {
      await s.cleanup();
      await oncall.close();
      await manager.close();
    }
  }, 150_000);
  it('acknowledges from the link of an email: GET only shows (a mail scanner acknowledges nothing), the form POST acknowledges, the repeats stop', async () => {
    const s = await Scenario.create('oncall-email');
    const smtp = await startSmtpCapture(s.dir, { username: 'watch', password: SMTP_PASSWORD });
    const port = await freePort();
    try {
      s.write({
        rules: [{ name: 'PartnerErrors', type: 'error_burst', match: { user: ['BANK*'] }, group_by: ['user'], threshold: 3, window: '1h', severity: 'critical' }],
        receivers: [
          {
            name: 'oncall-mail',
            email: {
              smtp: { host: '127.0.0.1', port: smtp.port, secure: false, require_tls: true, username: 'watch', password: SMTP_PASSWORD, tls: { ca_file: smtp.caFile } },
              from: 'transfer-watch@example.com',
              to: ['oncall@example.com'],
            },
          },
        ],
        route: { receiver: 'oncall-mail', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '2s', repeat_interval: '4s' },
        extra: { server: { listen: `127.0.0.1:${port}`, external_url: `http://127.0.0.1:${port}` } },
      });
      await s.start();
      const now = Date.now();
      s.inject([0, 1, 2].map((k) => failure(now - 2_000 + k * 100, { USUARIO: 'BANK7', NOMEARQUIVO: `/in/BANK7/RET_${k}.RET` })));
      await eventually(() => smtp.mails.length >= 1, 30_000);
      const parts = mimeParts(smtp.mails[0]!.raw);
      const link = /Acknowledge \(opens a page to confirm\): (http:\/\/\S+)/.exec(parts.get('text/plain') ?? '')?.[1];
      expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/-/ack\\?t=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
      expect(parts.get('text/html')).toContain(`href="${link ?? ''}"`);

      // A mail scanner opens the link: a page with a form, nothing acknowledged.
      const shown = await fetch(link!);
      expect(shown.status).toBe(200);
      const pageText = await shown.text();
      expect(pageText).toContain('PartnerErrors');
      expect(pageText).toContain('<form method="post" action="/-/ack"');
      const acked = async () => alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts.find((a) => a.labels['user'] === 'BANK7')?.ack;
      expect(await acked()).toBeUndefined();

      // A token changed by one character is not this cluster's.
      const token = new URL(link!).searchParams.get('t') ?? '';
      const forged = await fetch(`${s.url}/-/ack?t=${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`);
      expect(forged.status).toBe(404);

      // The person confirms with the form.
      const posted = await fetch(`${s.url}/-/ack`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ t: token, author: 'bruno', comment: 'on it from my phone' }).toString() });
      expect(posted.status).toBe(200);
      expect(await posted.text()).toContain('1 alert acknowledged by bruno');
      expect(await acked()).toMatchObject({ by: 'bruno', comment: 'on it from my phone' });
      const mailsAtAck = smtp.mails.length;
      await sleep(9_000);
      expect(smtp.mails.length, 'no repeat of the acknowledged alert').toBe(mailsAtAck);
      // The link again: the page says it is acknowledged already.
      expect(await (await fetch(link!)).text()).toContain('Acknowledged by bruno');
    } finally {
      await s.cleanup();
      await smtp.close();
    }
  }, 120_000);
  it('acknowledges from the Acknowledge button of a Slack message, whose click comes back over Socket Mode', async () => {
    const s = await Scenario.create('oncall-slack');
    const slack = await startSlackDouble();
    try {
      s.write({
        rules: [{ name: 'PartnerErrors', type: 'error_burst', match: { user: ['BANK*'] }, group_by: ['user'], threshold: 3, window: '1h', severity: 'critical' }],
        receivers: [{ name: 'oncall-slack', slack: { webhook_url: `${slack.url}/services/T000/B000/${SLACK_WEBHOOK_SECRET}`, app_token: SLACK_APP_TOKEN, api_url: `${slack.url}/api/` } }],
        route: { receiver: 'oncall-slack', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '2s', repeat_interval: '1h' },
      });
      await s.start();
      // The daemon opened its Socket Mode connection with the app token (no public URL of its own).
      await eventually(() => slack.sockets() >= 1, 20_000);
      expect(slack.opened()).toEqual([`Bearer ${SLACK_APP_TOKEN}`]);

      const now = Date.now();
      s.inject([0, 1, 2].map((k) => failure(now - 2_000 + k * 100, { USUARIO: 'BANK9', NOMEARQUIVO: `/in/BANK9/RET_${k}.RET` })));
      await eventually(() => slack.messages().length >= 1, 30_000);
      const message = slack.messages()[0] as { blocks: Array<{ type: string; elements?: Array<{ action_id?: string; value?: string }> }> };
      const button = message.blocks.find((b) => b.type === 'actions')?.elements?.find((e) => e.action_id === 'tw_ack');
      expect(button?.value).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

      // Someone clicks it: Slack sends the interaction over the socket; the daemon acknowledges the envelope.
      const envelope = await slack.click({ id: 'U042', username: 'carla' }, button?.value ?? '');
      expect(envelope).toBe('acknowledged');
      await eventually(() => slack.responses().length >= 1, 10_000);
      expect(slack.responses()[0]).toMatchObject({ replace_original: false, text: 'Acknowledged by carla: 1 alert (no repeats, no escalation while they fire). (<@U042>)' });
      const alerts = alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts;
      expect(alerts.find((a) => a.labels['user'] === 'BANK9')?.ack).toMatchObject({ by: 'carla', comment: 'from Slack' });
      // A second click: nothing left to acknowledge, and it says so.
      await slack.click({ id: 'U043', username: 'dan' }, button?.value ?? '');
      await eventually(() => slack.responses().length >= 2, 10_000);
      expect(String(slack.responses()[1]?.['text'])).toMatch(/^Nothing to acknowledge/);
      // The app token and the webhook's secret are nowhere in the log.
      expect(s.allLogs()).not.toContain(SLACK_APP_TOKEN);
      expect(s.allLogs()).not.toContain(SLACK_WEBHOOK_SECRET);
    } finally {
      await s.cleanup();
      await slack.close();
    }
  }, 120_000);
});
