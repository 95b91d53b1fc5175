import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmailIntegration } from '../../../src/notify/integrations/email/email-integration.js';
import { NotifyError } from '../../../src/notify/notification.js';
import { emailConfigSchema } from '../../../src/notify/integrations/email/email-schema.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';
import { startSmtpCapture, type ReceivedMail } from '../../helpers/smtp-capture.js';

const PASSWORD = 's3cret-smtp-pass';

describe('email integration against a real SMTP server with STARTTLS and AUTH', () => {
  let dir: string;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  let port: number;
  let received: ReceivedMail[];
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tw-smtp-'));
    smtp = await startSmtpCapture(dir, { username: 'watch', password: PASSWORD });
    port = smtp.port;
    received = smtp.mails;
  });

  afterAll(async () => {
    await smtp.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    received.length = 0;
  });

  const integration = (password = PASSWORD, extra: Record<string, unknown> = {}) =>
    createEmailIntegration(
      emailConfigSchema.parse({
        smtp: { host: '127.0.0.1', port, require_tls: true, username: 'watch', password, tls: { ca_file: smtp.caFile } },
        from: 'transfer-watch@example.com',
        to: ['ops@example.com'],
        ...extra,
      }),
      { logger: silentLogger(), templates: undefined, clock, fetchTimeoutMs: 10_000 },
    );

  it('sends multipart text + HTML over STARTTLS with AUTH, subject starting [FIRING:1]', async () => {
    const alert = burstAlert({
      samples: [
        { time: T0 - 1000, file: '<script>alert(1)</script>.RET', code: 12, message: 'bad', user: 'BANK1', instance: 'PROD1' },
      ],
    });
    await integration().send(notificationOf([alert]));
    expect(received).toHaveLength(1);
    const mail = received[0];
    if (!mail) throw new Error('no mail');
    expect(mail.secure).toBe(true);
    expect(mail.user).toBe('watch');
    expect(mail.from).toBe('transfer-watch@example.com');
    expect(mail.to).toEqual(['ops@example.com']);
    const headers = mail.raw.split('\r\n\r\n')[0] ?? '';
    expect(headers).toMatch(/^Subject: \[FIRING:1\] TransferErrorBurst/m);
    expect(headers).toMatch(/^Content-Type: multipart\/alternative/m);
    expect(mail.raw).toMatch(/Content-Type: text\/plain/);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    const html = decodeQuotedPrintable(part(mail.raw, 'text/html'));
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;.RET');
    expect(html).not.toContain('<script>');
    expect(html).toContain('2026-11-22 13:04:04 UTC');
    const text = decodeQuotedPrintable(part(mail.raw, 'text/plain'));
    expect(text).toContain('Count: 7 failed transfers in 10m');
    expect(text).toContain('<script>alert(1)</script>.RET');
  });

  it('keeps CR/LF in a value out of the headers', async () => {
    const alert = burstAlert({ labels: { file: 'EVIL\r\nBcc: victim@example.com\r\nX-Injected: yes' } });
    await integration().send(notificationOf([alert]));
    const mail = received[0];
    if (!mail) throw new Error('no mail');
    const headers = mail.raw.split('\r\n\r\n')[0] ?? '';
    expect(headers).not.toMatch(/^Bcc:/im);
    expect(headers).not.toMatch(/^X-Injected:/im);
    expect(mail.to).toEqual(['ops@example.com']);
    expect(headers).toMatch(/^Subject: \[FIRING:1\] TransferErrorBurst/m);
  });

  it('says [RESOLVED] and when a missing file arrived late', async () => {
    const alert = burstAlert({
      labels: { alertname: 'DailyStatementMissing' },
      annotations: { summary: 'expected statement not received' },
      state: 'resolved',
      resolvedAt: T0,
      values: { count: 0, min_count: 1, window_ms: 8 * 3_600_000, deadline_ms: T0 - 3_600_000, deadline: 'rule zone text', arrived_at_ms: T0 - 60_000 },
      samples: [],
    });
    await integration().send(notificationOf([alert], { displayTimezone: 'America/Sao_Paulo' }));
    const mail = received[0];
    if (!mail) throw new Error('no mail');
    expect(mail.raw).toMatch(/^Subject: \[RESOLVED\] DailyStatementMissing/m);
    const text = decodeQuotedPrintable(part(mail.raw, 'text/plain'));
    expect(text).toContain('Resolved: the file arrived late, at 2026-11-22 10:03:05 -03:00 (America/Sao_Paulo)');
    expect(text).toContain('Deadline: 2026-11-22 09:04:05 -03:00 (America/Sao_Paulo)');
    // The window ends at the deadline: said as a length, so the deadline is shown once.
    expect(text).toContain('Arrived: 0 of 1 expected in the 8h before the deadline');
    expect(text).not.toContain('failed transfers');
  });

  it('reports a wrong password (SMTP 535) as a retryable NotifyError without the password: a reload with the rotated password delivers it', async () => {
    const wrong = 'wrong-password-123';
    const err = await integration(wrong)
      .send(notificationOf([burstAlert()]))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).retryable).toBe(true);
    expect((err as NotifyError).message).toContain('535');
    expect((err as NotifyError).message).not.toContain(wrong);
    expect(received).toHaveLength(0);
  });

  it('classifies SMTP 4xx replies as retryable and 5xx as permanent', async () => {
    const temp = await integration(PASSWORD, { to: ['tempfail@example.com'] })
      .send(notificationOf([burstAlert()]))
      .catch((e: unknown) => e);
    const perm = await integration(PASSWORD, { to: ['reject@example.com'] })
      .send(notificationOf([burstAlert()]))
      .catch((e: unknown) => e);
    expect(temp).toBeInstanceOf(NotifyError);
    expect(perm).toBeInstanceOf(NotifyError);
    expect((temp as NotifyError).retryable).toBe(true);
    expect((perm as NotifyError).retryable).toBe(false);
    expect(received).toHaveLength(0);
  });

  it('classifies an unreachable server as retryable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const mailer = createEmailIntegration(
      emailConfigSchema.parse({ smtp: { host: '127.0.0.1', port: closedPort }, from: 'a@example.com', to: ['b@example.com'] }),
      { logger: silentLogger(), templates: undefined, clock, fetchTimeoutMs: 5000 },
    );
    const err = await mailer.send(notificationOf([burstAlert()])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).retryable).toBe(true);
  });

  it('renders user subject/text/html templates with per-part escaping', async () => {
    const mailer = integration(PASSWORD, {
      subject_template: 'ALERT {{alertname}} {{#each alerts}}{{labels.file}}{{/each}}',
      text_template: 'text {{#each alerts}}{{labels.file}}{{/each}}',
      html_template: '<p>{{#each alerts}}{{labels.file}}{{/each}}</p>',
    });
    await mailer.send(notificationOf([burstAlert({ labels: { file: '<b>x</b>\r\nBcc: a@b.c' } })]));
    const mail = received[0];
    if (!mail) throw new Error('no mail');
    const headers = mail.raw.split('\r\n\r\n')[0] ?? '';
    expect(headers).toMatch(/^Subject: ALERT TransferErrorBurst <b>x<\/b> Bcc: a@b.c$/m);
    expect(headers).not.toMatch(/^Bcc:/im);
    expect(decodeQuotedPrintable(part(mail.raw, 'text/html'))).toContain('<p>&lt;b&gt;x&lt;/b&gt; Bcc: a@b.c</p>');
  });
});

/** The body of the first MIME part with the given content type (raw, still transfer-encoded). */
function part(raw: string, type: string): string {
  const start = raw.indexOf(`Content-Type: ${type}`);
  if (start < 0) throw new Error(`no ${type} part`);
  const bodyStart = raw.indexOf('\r\n\r\n', start) + 4;
  const end = raw.indexOf('\r\n--', bodyStart);
  return raw.slice(bodyStart, end < 0 ? undefined : end);
}

function decodeQuotedPrintable(text: string): string {
  const joined = text.replace(/=\r\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const c = joined[i];
    const hex = joined.slice(i + 1, i + 3);
    if (c === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c ?? '', 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8').replace(/\r\n/g, '\n');
}
