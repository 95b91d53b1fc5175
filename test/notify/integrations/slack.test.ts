import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSlackIntegration } from '../../../src/notify/integrations/slack/slack-integration.js';
import { NotifyError } from '../../../src/notify/notification.js';
import { slackConfigSchema } from '../../../src/notify/integrations/slack/slack-schema.js';
import { TemplateSet } from '../../../src/notify/templates/template-set.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { CaptureServer } from './capture-server.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';

const SECRET_PATH = '/services/T000/B000/XXXXsecretXXXX';

describe('slack integration', () => {
  let server: CaptureServer;
  const clock = new ManualClock(T0);
  const deps = () => ({ logger: silentLogger(), templates: undefined, clock, fetchTimeoutMs: 5000 });
  const integration = (extra: Record<string, unknown> = {}) =>
    createSlackIntegration(slackConfigSchema.parse({ webhook_url: server.url + SECRET_PATH, ...extra }), deps());

  beforeEach(async () => {
    server = await CaptureServer.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it('posts text starting [FIRING:N] alertname with blocks showing count, window and samples', async () => {
    await integration().send(notificationOf([burstAlert()]));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url).toBe(SECRET_PATH);
    const body = server.json() as { text: string; blocks: { type: string; text?: { text: string } }[] };
    expect(body.text.startsWith('[FIRING:1] TransferErrorBurst')).toBe(true);
    expect(body.text).toContain('7 failed transfers for BANK1 in 10m');
    expect(Object.keys(body).sort()).toEqual(['blocks', 'text']);
    const all = JSON.stringify(body.blocks);
    expect(all).toContain('Count: 7 failed transfers in 10m, from 2026-11-22 12:54:05 UTC to 2026-11-22 13:04:05 UTC');
    expect(all).toContain('2026-11-22 13:04:04 UTC');
    expect(all).toContain('code 12');
    expect(all).toContain('Times in UTC');
  });

  it('escapes <!channel> in a file name so it pings nobody', async () => {
    await integration().send(notificationOf([burstAlert()]));
    const raw = server.requests[0]?.body ?? '';
    expect(raw).toContain('&lt;!channel&gt;.RET');
    expect(raw).not.toContain('<!channel>');
    expect(raw).toContain('connection &lt;reset&gt;');
  });

  it('says [RESOLVED] for a resolved group and shows the zone of the resolution time', async () => {
    const alert = burstAlert({ state: 'resolved', resolvedAt: T0 + 3_600_000 });
    await integration().send(notificationOf([alert], { displayTimezone: 'America/Sao_Paulo' }));
    const body = server.json() as { text: string; blocks: unknown[] };
    expect(body.text.startsWith('[RESOLVED] TransferErrorBurst')).toBe(true);
    expect(JSON.stringify(body.blocks)).toContain('Resolved at: 2026-11-22 11:04:05 -03:00 (America/Sao_Paulo)');
  });

  it('classifies 429 with Retry-After as retryable with retryAfterMs, and keeps the webhook path out of the error', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '7' }, body: 'rate_limited' });
    const err = await integration()
      .send(notificationOf([burstAlert()]))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    const notifyError = err as NotifyError;
    expect(notifyError.retryable).toBe(true);
    expect(notifyError.retryAfterMs).toBe(7000);
    expect(notifyError.message).toContain('429');
    expect(notifyError.message).not.toContain('secret');
    expect(JSON.stringify(notifyError)).not.toContain('secret');
    expect(notifyError.cause).toBeUndefined();
  });

  it('honours an HTTP-date Retry-After against the injected clock', async () => {
    server.reply({ status: 503, headers: { 'retry-after': new Date(T0 + 30_000).toUTCString() } });
    const err = await integration()
      .send(notificationOf([burstAlert()]))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).retryable).toBe(true);
    expect((err as NotifyError).retryAfterMs).toBe(30_000);
  });

  it('classifies 400 as not retryable without the secret path', async () => {
    server.reply({ status: 400, body: 'invalid_payload' });
    const err = await integration()
      .send(notificationOf([burstAlert()]))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).retryable).toBe(false);
    expect((err as NotifyError).message).not.toContain('XXXX');
  });

  it('classifies a refused connection as retryable without the secret path', async () => {
    const url = server.url;
    await server.close();
    const slack = createSlackIntegration(slackConfigSchema.parse({ webhook_url: url + SECRET_PATH }), deps());
    const err = await slack.send(notificationOf([burstAlert()])).catch((e: unknown) => e);
    server = await CaptureServer.start(); // for afterEach
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).retryable).toBe(true);
    expect((err as NotifyError).message).not.toContain('XXXX');
  });

  it('renders a user template (inline or from a file) with escaped values and no blocks', async () => {
    const templates = new TemplateSet(new Map([['my-slack', '{{title}} files: {{#each alerts}}{{#each samples}}{{file}} {{/each}}{{/each}}']]));
    const slack = createSlackIntegration(
      slackConfigSchema.parse({ webhook_url: server.url + SECRET_PATH, template: 'my-slack', channel: '#ops' }),
      { ...deps(), templates },
    );
    await slack.send(notificationOf([burstAlert()]));
    const body = server.json() as Record<string, unknown>;
    expect(body.text).toBe('[FIRING:1] TransferErrorBurst {mft_instance=PROD1, severity=critical, source=prod, user=BANK1} files: &lt;!channel&gt;.RET PAY_002.RET ');
    expect(body.blocks).toBeUndefined();
    expect(body.channel).toBe('#ops');
  });
});

describe('slack integration: abort', () => {
  it('stops waiting when the signal aborts and reports a retryable error', async () => {
    // A server that never answers: only the abort can end the wait.
    const { createServer } = await import('node:http');
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const address = hanging.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const slack = createSlackIntegration(slackConfigSchema.parse({ webhook_url: `http://127.0.0.1:${port}${SECRET_PATH}` }), {
        logger: silentLogger(),
        templates: undefined,
        clock: new ManualClock(T0),
      });
      const controller = new AbortController();
      const sending = slack.send(notificationOf([burstAlert()]), controller.signal).catch((e: unknown) => e);
      controller.abort();
      const err = await sending;
      expect(err).toBeInstanceOf(NotifyError);
      expect((err as NotifyError).retryable).toBe(true);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});
