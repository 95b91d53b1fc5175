import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startCaptureServer } from '../helpers/capture-server.js';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { headerValue, startSmtpCapture } from '../helpers/smtp-capture.js';
import { Scenario, sleep } from './helpers/e2e-daemon.js';

/**
 * Scheduled SLA reports (contract section 11, `sla.reports`) through the built daemon: a report that runs every
 * 3 s for the current month goes to a receiver with email (a real SMTP server: the table, the CSV attached) and a
 * webhook (JSON rows); each period is sent once, across runs and across a kill -9 and a restart.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const SMTP_PASSWORD = 'smtp-Pa55-report';

describe.skipIf(!existsSync(CLI))('scheduled SLA reports through the built daemon', () => {
  it('sends each period once, by email with the CSV attached and by webhook, also after a kill -9', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('sla-reports');
    const smtp = await startSmtpCapture(s.dir, { username: 'watch', password: SMTP_PASSWORD });
    try {
      s.write({
        rules: [{ name: 'PartnerFileMissing', type: 'missing_file', deadline: '*/20 * * * * *', window: '15s', for_each: { label: 'user', values: ['A'] }, sla: { objective: 0.9 } }],
        receivers: [
          { name: 'null', console: {} },
          {
            name: 'treasury',
            email: {
              smtp: { host: '127.0.0.1', port: smtp.port, secure: false, require_tls: true, username: 'watch', password: SMTP_PASSWORD, tls: { ca_file: smtp.caFile } },
              from: 'transfer-watch@example.com',
              to: ['treasury@example.com'],
            },
            webhook: { url: `${hook.url}/sla` },
          },
        ],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        extra: { sla: { reports: [{ cron: '*/3 * * * * *', period: 'current_month', receiver: 'treasury' }] } },
      });
      const startedOn = new Date().toISOString().slice(0, 10);
      await s.start();
      await eventually(() => smtp.mails.length >= 1 && hook.requests.length >= 1, 30_000);
      await sleep(7_000); // two more runs of the cron: the same period, nothing more
      expect([smtp.mails.length, hook.requests.length]).toEqual([1, 1]);
      const mail = smtp.mails[0]!;
      // The period is the report's own (current_month up to its day); the test only checks it is the month so far of
      // a day the test ran on (a run across midnight UTC may see either).
      const body = JSON.parse(hook.requests[0]!.body) as { kind: string; from: string; to: string; rows: unknown[] };
      const today = body.to;
      expect([startedOn, new Date().toISOString().slice(0, 10)]).toContain(today);
      expect(headerValue(mail.headers, 'subject')).toBe(`SLA report ${today.slice(0, 8)}01 to ${today}`);
      expect(mail.raw).toContain(`filename=sla-${today.slice(0, 8)}01-${today}.csv`);
      expect(mail.raw).toContain('ON-TIME RATE');
      expect([body.kind, body.from, body.to]).toEqual(['sla_report', `${today.slice(0, 8)}01`, today]);

      // Each try of each integration is a notification attempt of the history.
      const attempts = await eventually(async () => {
        const body = (await (await fetch(`${s.url}/api/v1/history/notifications`)).json()) as { attempts: Array<{ kind: string; integration: string; outcome: string; period?: string; receiver: string; status: string }> };
        const reports = body.attempts.filter((a) => a.kind === 'sla_report');
        return reports.length >= 2 ? reports : undefined;
      }, 20_000);
      expect(attempts.map((a) => [a.integration, a.outcome, a.receiver, a.status, a.period]).sort()).toEqual([
        ['email', 'sent', 'treasury', 'report', `${today.slice(0, 8)}01..${today}`],
        ['webhook', 'sent', 'treasury', 'report', `${today.slice(0, 8)}01..${today}`],
      ]);

      await s.daemon!.kill('SIGKILL');
      await s.start();
      await sleep(7_000);
      expect([smtp.mails.length, hook.requests.length]).toEqual([1, 1]);
      expect(s.allLogs()).not.toContain(SMTP_PASSWORD);
    } finally {
      await s.cleanup();
      await Promise.all([hook.close(), smtp.close()]);
    }
  }, 120_000);
});
