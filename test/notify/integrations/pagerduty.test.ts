import { beforeEach, describe, expect, it } from 'vitest';
import { pagerdutyDedupKey } from '../../../src/notify/integrations/pagerduty/pagerduty-event.js';
import { createPagerdutyIntegration } from '../../../src/notify/integrations/pagerduty/pagerduty-integration.js';
import { pagerdutyConfigSchema } from '../../../src/notify/integrations/pagerduty/pagerduty-schema.js';
import type { NotifyError } from '../../../src/notify/notification.js';
import { captureServerPerTest, type CaptureServer } from './capture-server.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';

const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdef012345';

describe('pagerduty integration (Events API v2)', () => {
  const { server: current, deps } = captureServerPerTest(T0);
  let server: CaptureServer;
  beforeEach(() => {
    server = current();
  });

  const integration = (extra: Record<string, unknown> = {}) =>
    createPagerdutyIntegration(pagerdutyConfigSchema.parse({ routing_key: ROUTING_KEY, url: `${server.url}/v2/enqueue`, ...extra }), deps);

  it('triggers with dedup_key = the group key, then resolves the same incident', async () => {
    const pd = integration();
    const firing = notificationOf([burstAlert({ annotations: { summary: 'x', runbook_url: 'http://wiki.example/rb' } })], { idempotencyKey: 'idem-1' });
    await pd.send(firing);
    await pd.send(notificationOf([burstAlert({ state: 'resolved', resolvedAt: T0 + 60_000 })]));
    expect(server.requests.map((r) => r.url)).toEqual(['/v2/enqueue', '/v2/enqueue']);
    expect(server.requests[0]?.headers['idempotency-key']).toBe('idem-1');
    expect(server.json(0)).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: '{}:{alertname="TransferErrorBurst"}',
      payload: {
        summary: '[FIRING:1] TransferErrorBurst {mft_instance=PROD1, severity=critical, source=prod, user=BANK1}',
        source: 'prod',
        severity: 'critical',
        timestamp: new Date(T0).toISOString(),
        group: 'TransferErrorBurst',
      },
      client: 'transfer-watch',
      client_url: 'http://transfer-watch.example:9464',
      links: [
        { href: 'http://transfer-watch.example:9464', text: 'transfer-watch' },
        { href: 'http://wiki.example/rb', text: 'Runbook' },
      ],
    });
    const details = (server.json(0) as { payload: { custom_details: { firing: string[] } } }).payload.custom_details;
    expect(details.firing[0]).toContain('Count: 7 failed transfers in 10m');
    expect(server.json(1)).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: '{}:{alertname="TransferErrorBurst"}' });
  });

  it('maps severity from the label, or the configured one, else error; hashes an over-long group key', async () => {
    await integration({ severity: 'warning' }).send(notificationOf([burstAlert()]));
    await integration().send(notificationOf([burstAlert({ labels: { severity: 'page' } })], { commonLabels: { severity: 'page' } }));
    expect((server.json(0) as { payload: { severity: string } }).payload.severity).toBe('warning');
    expect((server.json(1) as { payload: { severity: string } }).payload.severity).toBe('error');
    const long = `{}:{user="${'x'.repeat(300)}"}`;
    expect(pagerdutyDedupKey(long)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('retries 429 and 5xx, gives up on 400, and never shows the routing key in an error', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '3' } });
    server.reply({ status: 503 });
    server.reply({ status: 400, body: `{"status":"invalid event","routing_key":"${ROUTING_KEY}"}` });
    const pd = integration();
    const errors = [];
    for (let i = 0; i < 3; i++) errors.push((await pd.send(notificationOf([burstAlert()])).catch((e: unknown) => e)) as NotifyError);
    expect(errors.map((e) => e.retryable)).toEqual([true, true, false]);
    expect(errors[0]?.retryAfterMs).toBe(3000);
    for (const e of errors) expect(e.message).not.toContain(ROUTING_KEY);
  });
});
