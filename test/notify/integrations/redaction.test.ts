import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIntegrations } from '../../../src/notify/integrations/registry.js';
import { receiverSchema } from '../../../src/notify/receiver-schema.js';
import { ManualClock } from '../../../src/util/clock.js';
import { createLogger } from '../../../src/util/logger.js';
import { CaptureServer } from './capture-server.js';
import { burstAlert, notificationOf, T0 } from './notification-fixture.js';

const SLACK_SECRET = 'T0AAA/B0BBB/slackSecretValue';
const TOKEN = 'bearer-secret-token-42';
const HOOK_SECRET = 'hookSecretPath';

/** Failed sends logged the way the dispatcher will (`logger.warn({ err }, ...)`) must show no secret. */
describe('secrets never reach errors or logs', () => {
  let server: CaptureServer;
  let lines: string;
  const sink = () =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines += chunk.toString();
        done();
      },
    });

  beforeEach(async () => {
    server = await CaptureServer.start();
    lines = '';
  });
  afterEach(async () => {
    await server.close();
  });

  it('slack, webhook and alertmanager failures (HTTP and network) carry no URL path or token', async () => {
    const logger = createLogger({ level: 'debug', destination: sink() });
    const deps = { logger, templates: undefined, clock: new ManualClock(T0) };
    const receiver = receiverSchema.parse({
      name: 'r',
      slack: { webhook_url: `${server.url}/services/${SLACK_SECRET}` },
      webhook: { url: `${server.url}/${HOOK_SECRET}`, bearer_token: TOKEN },
      alertmanager: { url: `http://user:amPassword99@127.0.0.1:1/${HOOK_SECRET}` },
    });
    server.reply({ status: 500, body: `${SLACK_SECRET} ${TOKEN}` });
    server.reply({ status: 401, body: TOKEN });
    const errors: unknown[] = [];
    for (const integration of createIntegrations(receiver, deps)) {
      const err = await integration.send(notificationOf([burstAlert()])).catch((e: unknown) => e);
      expect(err, integration.kind).toBeInstanceOf(Error);
      errors.push(err);
      logger.warn({ err, integration: integration.kind }, 'notification failed');
    }
    logger.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const text = errors.map((e) => `${String(e)} ${JSON.stringify(e)} ${(e as Error).stack ?? ''}`).join('\n') + lines;
    expect(lines).toContain('notification failed');
    for (const secret of ['slackSecretValue', TOKEN, HOOK_SECRET, 'amPassword99']) {
      expect(text).not.toContain(secret);
    }
  });
});
