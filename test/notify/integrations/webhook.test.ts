import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookIntegration } from '../../../src/notify/integrations/webhook/webhook-integration.js';
import { NotifyError } from '../../../src/notify/notification.js';
import { webhookConfigSchema } from '../../../src/notify/integrations/webhook/webhook-schema.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { CaptureServer } from './capture-server.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';

const TOKEN = 'tok-abcdef-123456';

describe('webhook integration', () => {
  let server: CaptureServer;
  const clock = new ManualClock(T0);
  const deps = { logger: silentLogger(), templates: undefined, clock };

  beforeEach(async () => {
    server = await CaptureServer.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it("posts exactly Alertmanager's webhook payload with headers and bearer token", async () => {
    const firing = burstAlert();
    const resolved = burstAlert({ labels: { user: 'BANK2' }, state: 'resolved', resolvedAt: T0 + 5000 });
    const hook = createWebhookIntegration(
      webhookConfigSchema.parse({ url: `${server.url}/hook`, headers: { 'X-Team': 'treasury' }, bearer_token: TOKEN }),
      deps,
    );
    await hook.send(
      notificationOf([firing, resolved], { commonLabels: { alertname: 'TransferErrorBurst', source: 'prod' } }),
    );
    const req = server.requests[0];
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/hook');
    expect(req?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req?.headers['x-team']).toBe('treasury');
    expect(req?.headers['content-type']).toContain('application/json');
    expect(server.json()).toEqual({
      version: '4',
      groupKey: '{}:{alertname="TransferErrorBurst"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'oncall',
      groupLabels: { alertname: 'TransferErrorBurst' },
      commonLabels: { alertname: 'TransferErrorBurst', source: 'prod' },
      commonAnnotations: { summary: '7 failed transfers for BANK1 in 10m' },
      externalURL: 'http://transfer-watch.example:9464',
      alerts: [
        {
          status: 'firing',
          labels: firing.labels,
          annotations: {
            ...firing.annotations,
            // The window with its zone and the failed transfers, as every other channel shows them.
            window: '10m, from 2026-11-22 12:54:05 UTC to 2026-11-22 13:04:05 UTC',
            transfers: '2026-11-22 13:04:04 UTC  <!channel>.RET  code 12  connection <reset>\n2026-11-22 13:04:03 UTC  PAY_002.RET  code 12  timeout',
          },
          startsAt: '2026-11-22T13:04:05.000Z',
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: `http://transfer-watch.example:9464/api/v1/alerts?fingerprint=${firing.fingerprint}`,
          fingerprint: firing.fingerprint,
        },
        {
          status: 'resolved',
          labels: resolved.labels,
          annotations: {
            ...resolved.annotations,
            window: '10m, from 2026-11-22 12:54:05 UTC to 2026-11-22 13:04:05 UTC',
            transfers: '2026-11-22 13:04:04 UTC  <!channel>.RET  code 12  connection <reset>\n2026-11-22 13:04:03 UTC  PAY_002.RET  code 12  timeout',
          },
          startsAt: '2026-11-22T13:04:05.000Z',
          endsAt: '2026-11-22T13:04:10.000Z',
          generatorURL: `http://transfer-watch.example:9464/api/v1/alerts?fingerprint=${resolved.fingerprint}`,
          fingerprint: resolved.fingerprint,
        },
      ],
    });
  });

  it('truncates to max_alerts and counts the rest in truncatedAlerts', async () => {
    const hook = createWebhookIntegration(webhookConfigSchema.parse({ url: server.url, max_alerts: 1 }), deps);
    await hook.send(notificationOf([burstAlert(), burstAlert({ labels: { user: 'B2' } }), burstAlert({ labels: { user: 'B3' } })]));
    const body = server.json() as { truncatedAlerts: number; alerts: unknown[] };
    expect(body.alerts).toHaveLength(1);
    expect(body.truncatedAlerts).toBe(2);
  });

  it('classifies 500 as retryable and 404 as not, without leaking the token or path', async () => {
    const hook = createWebhookIntegration(
      webhookConfigSchema.parse({ url: `${server.url}/hooks/secret-path-987?key=k123456`, bearer_token: TOKEN }),
      deps,
    );
    server.reply({ status: 500, body: `echo ${TOKEN}` });
    server.reply({ status: 404 });
    const first = await hook.send(notificationOf([burstAlert()])).catch((e: unknown) => e);
    const second = await hook.send(notificationOf([burstAlert()])).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(NotifyError);
    expect(second).toBeInstanceOf(NotifyError);
    expect((first as NotifyError).retryable).toBe(true);
    expect((first as NotifyError).retryAfterMs).toBeUndefined();
    expect((second as NotifyError).retryable).toBe(false);
    for (const e of [first, second]) {
      const message = (e as NotifyError).message;
      expect(message).not.toContain(TOKEN);
      expect(message).not.toContain('secret-path');
      expect(message).not.toContain('k123456');
    }
  });
});
