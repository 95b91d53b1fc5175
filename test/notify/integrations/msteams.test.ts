import { beforeEach, describe, expect, it } from 'vitest';
import { createMsteamsIntegration } from '../../../src/notify/integrations/msteams/msteams-integration.js';
import { msteamsConfigSchema } from '../../../src/notify/integrations/msteams/msteams-schema.js';
import { NotifyError } from '../../../src/notify/notification.js';
import { TemplateSet } from '../../../src/notify/templates/template-set.js';
import { captureServerPerTest, type CaptureServer } from './capture-server.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';

interface Card {
  type: string;
  attachments: Array<{ contentType: string; content: { type: string; version: string; body: Array<Record<string, unknown>>; actions?: unknown[] } }>;
}

/** Every `text` of the card's blocks, depth first. */
function texts(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(texts);
  if (typeof node !== 'object' || node === null) return [];
  const own = typeof (node as { text?: unknown }).text === 'string' ? [(node as { text: string }).text] : [];
  return [...own, ...Object.values(node).flatMap(texts)];
}

describe('msteams integration (Workflows / incoming webhook, Adaptive Card)', () => {
  const { server: current, deps } = captureServerPerTest(T0);
  let server: CaptureServer;
  beforeEach(() => {
    server = current();
  });

  it('posts one Adaptive Card naming the alert, its labels, count, window, samples and runbook', async () => {
    const alert = burstAlert({ annotations: { summary: '7 failed', runbook_url: 'http://wiki.example/runbooks/burst' } });
    const teams = createMsteamsIntegration(msteamsConfigSchema.parse({ webhook_url: `${server.url}/workflows/abc?sig=secret` }), deps);
    await teams.send({ ...notificationOf([alert]), idempotencyKey: 'k-1' });
    const req = server.requests[0];
    expect(req?.url).toBe('/workflows/abc?sig=secret');
    expect(req?.headers['idempotency-key']).toBe('k-1');
    const body = server.json() as Card;
    expect(body.type).toBe('message');
    const attachment = body.attachments[0];
    expect(attachment?.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(attachment?.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    const all = texts(attachment?.content.body);
    expect(all[0]).toBe('[FIRING:1] TransferErrorBurst {mft\\_instance=PROD1, severity=critical, source=prod, user=BANK1}');
    expect(all).toContain('Count: 7 failed transfers in 10m, from 2026-11-22 12:54:05 UTC to 2026-11-22 13:04:05 UTC');
    expect(all).toContain('Runbook: [runbook](http://wiki.example/runbooks/burst)');
    // A hostile file name neither formats nor links.
    expect(all.some((t) => t.includes('\\<!channel\\>.RET'))).toBe(true);
    expect(attachment?.content.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Open transfer-watch', url: 'http://transfer-watch.example:9464' }]);
  });

  it('says RESOLVED in green and uses a user text template', async () => {
    const templates = new TemplateSet(new Map([['teams', '{{#each alerts}}{{alertname}} for {{labels.user}} is {{status}}{{/each}}']]));
    const teams = createMsteamsIntegration(msteamsConfigSchema.parse({ webhook_url: `${server.url}/hook`, text_template: 'teams' }), { ...deps, templates });
    await teams.send(notificationOf([burstAlert({ state: 'resolved', resolvedAt: T0 + 60_000 })]));
    const body = server.json() as Card;
    const blocks = body.attachments[0]?.content.body ?? [];
    expect(blocks[0]).toMatchObject({ color: 'Good' });
    expect(String(blocks[0]?.text)).toMatch(/^\[RESOLVED\] TransferErrorBurst \{/);
    expect(blocks[1]?.text).toBe('TransferErrorBurst for BANK1 is resolved');
  });

  it('retries 429 with Retry-After and 5xx, not 400; the URL (a secret) never appears in the error', async () => {
    const teams = createMsteamsIntegration(msteamsConfigSchema.parse({ webhook_url: `${server.url}/workflows/s3cr3t-path` }), deps);
    server.reply({ status: 429, headers: { 'retry-after': '7' } });
    server.reply({ status: 400, body: 'bad card' });
    const throttled = (await teams.send(notificationOf([burstAlert()])).catch((e: unknown) => e)) as NotifyError;
    const bad = (await teams.send(notificationOf([burstAlert()])).catch((e: unknown) => e)) as NotifyError;
    expect(throttled).toBeInstanceOf(NotifyError);
    expect(throttled.retryable).toBe(true);
    expect(throttled.retryAfterMs).toBe(7000);
    expect(bad.retryable).toBe(false);
    expect(`${throttled.message} ${bad.message}`).not.toContain('s3cr3t-path');
  });
});
