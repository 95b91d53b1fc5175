import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertsEndpoint, createAlertmanagerIntegration } from '../../../src/notify/integrations/alertmanager/alertmanager-integration.js';
import { alertmanagerConfigSchema } from '../../../src/notify/integrations/alertmanager/alertmanager-schema.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';
import { CaptureServer } from './capture-server.js';
import { burstAlert, notificationOf } from './notification-fixture.js';
import { freePort } from '../../helpers/free-port.js';

const BINARY = process.env.ALERTMANAGER_BIN ?? '/usr/bin/prometheus-alertmanager';
const HAVE_BINARY = existsSync(BINARY);
const IN_CI = process.env.CI === 'true';

describe('alertmanager integration: payload', () => {
  it('posts to {url}/api/v2/alerts keeping a path prefix, endsAt 4 resend intervals ahead while firing', async () => {
    const server = await CaptureServer.start();
    try {
      const clock = new ManualClock(Date.UTC(2026, 0, 1));
      const am = createAlertmanagerIntegration(
        alertmanagerConfigSchema.parse({ url: `${server.url}/am/`, resend_interval: '1m' }),
        { logger: silentLogger(), templates: undefined, clock },
      );
      await am.send(notificationOf([burstAlert({ firedAt: clock.now() - 5000, labels: { empty: '' } })]));
      expect(server.requests[0]?.url).toBe('/am/api/v2/alerts');
      const [posted] = server.json() as { labels: Record<string, string>; endsAt: string; startsAt: string; generatorURL: string }[];
      expect(posted?.endsAt).toBe('2026-01-01T00:04:00.000Z');
      expect(posted?.startsAt).toBe('2025-12-31T23:59:55.000Z');
      expect(posted?.labels).not.toHaveProperty('empty');
      expect(posted?.generatorURL).toMatch(/^http:\/\/transfer-watch\.example:9464\/api\/v1\/alerts\?fingerprint=/);
    } finally {
      await server.close();
    }
  });

  it('joins the endpoint without doubling slashes', () => {
    expect(alertsEndpoint('http://am:9093')).toBe('http://am:9093/api/v2/alerts');
    expect(alertsEndpoint('http://am:9093/prefix//')).toBe('http://am:9093/prefix/api/v2/alerts');
  });
});

describe('alertmanager integration against the real Alertmanager binary', () => {
  if (!HAVE_BINARY) {
    if (IN_CI) {
      it('needs the Alertmanager binary', () => {
        throw new Error(`${BINARY} not found: install Debian's prometheus-alertmanager package (CI must run this test)`);
      });
    } else {
      console.warn(`skipping real Alertmanager test: ${BINARY} not found (install prometheus-alertmanager)`);
      it.skip(`needs ${BINARY}`, () => undefined);
    }
    return;
  }

  let dir: string;
  let child: ChildProcess;
  let base: string;
  let output = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tw-am-'));
    writeFileSync(join(dir, 'alertmanager.yml'), 'route:\n  receiver: "null"\nreceivers:\n  - name: "null"\n');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(
      BINARY,
      [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    await waitReady(`${base}/-/ready`, () => output);
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows a posted firing alert, then no longer lists it as active once resolved', async () => {
    const clock = new ManualClock(Date.now());
    const am = createAlertmanagerIntegration(alertmanagerConfigSchema.parse({ url: base, resend_interval: '1m' }), {
      logger: silentLogger(),
      templates: undefined,
      clock,
    });
    expect(am.resendInterval).toBe(60_000);
    const firing = burstAlert({ activeAt: clock.now() - 120_000, firedAt: clock.now() - 60_000 });
    await am.send(notificationOf([firing]));

    const active = await getAlerts(base);
    const found = active.find((a) => a.labels.alertname === 'TransferErrorBurst' && a.labels.user === 'BANK1');
    expect(found, JSON.stringify(active)).toBeDefined();
    expect(found?.status.state).toBe('active');
    expect(found?.annotations.summary).toBe('7 failed transfers for BANK1 in 10m');
    expect(found?.generatorURL).toContain('fingerprint=');
    expect(Date.parse(found?.endsAt ?? '')).toBe(clock.now() + 240_000);

    const resolved = { ...firing, state: 'resolved' as const, resolvedAt: clock.now() - 1000 };
    await am.send(notificationOf([resolved]));
    const after = await getAlerts(base);
    expect(after.find((a) => a.labels.user === 'BANK1' && a.labels.alertname === 'TransferErrorBurst')).toBeUndefined();
  });
});

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string;
  generatorURL: string;
  status: { state: string };
}

async function getAlerts(base: string): Promise<AmAlert[]> {
  const res = await fetch(`${base}/api/v2/alerts`);
  expect(res.status).toBe(200);
  return (await res.json()) as AmAlert[];
}

/** Poll the readiness endpoint: start-up time varies on a busy machine, so there is no fixed sleep. */
async function waitReady(url: string, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Alertmanager did not become ready:\n${log()}`);
}
