import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { createAlertmanagerView } from '../../src/daemon/alertmanager-view.js';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import type { Silence } from '../../src/notify/mute/silence.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { silentLogger } from '../../src/util/logger.js';
import { rawRequest as request } from '../helpers/raw-request.js';
import { firing, notifyConfig } from '../notify/helpers.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const bank1 = firing({ alertname: 'Burst', user: 'BANK1', severity: 'critical' }, NOW - 60_000);
const bank2 = firing({ alertname: 'Burst', user: 'BANK2', severity: 'warning' }, NOW - 30_000);
const silence: Silence = {
  id: '6b1f3c2e-0000-4000-8000-000000000001',
  matchers: [{ name: 'user', value: 'BANK2', isRegex: false, isEqual: true }],
  startsAt: new Date(NOW - 1000).toISOString(),
  endsAt: new Date(NOW + 3_600_000).toISOString(),
  createdBy: 'alice',
  comment: 'maintenance',
  updatedAt: new Date(NOW - 1000).toISOString(),
  status: { state: 'active' },
};

let server: RunningHttpServer;
beforeEach(async () => {
  const config = notifyConfig({
    receivers: [{ name: 'ops', console: {} }, { name: 'mail', console: {} }],
    route: { receiver: 'ops', group_by: ['alertname'], routes: [{ matchers: ['severity="critical"'], receiver: 'mail', continue: true }] },
  });
  const view = createAlertmanagerView({
    now: () => NOW,
    startedAt: NOW - 5000,
    version: '1.2.3',
    config: () => config,
    firingAlerts: () => [bank1, bank2],
    status: (a: Alert) => ({ silencedBy: a === bank2 ? [silence.id] : [], inhibitedBy: [], mutedBy: [] }),
    receiversOf: (a: Alert) => (a === bank1 ? ['mail', 'ops'] : ['ops']),
    groups: () => [{ labels: { alertname: 'Burst' }, receiver: 'ops', alerts: [bank1, bank2] }],
    silences: () => [silence],
  });
  const silences = { list: () => [silence], get: (id: string) => (id === silence.id ? silence : undefined), create: async () => silence, expire: async () => true };
  server = await startHttpServer({
    listen: '127.0.0.1:0',
    logger: silentLogger(),
    metrics: new TransferWatchMetrics({ maxSeries: 10, version: 't', collectDefault: false }),
    api: { ready: () => true, alerts: () => [], status: () => ({}), reload: async () => ({ ok: true }), silences, alertmanager: view },
  });
});
afterEach(async () => {
  await server.close();
});

async function get(path: string): Promise<{ status: number; json: unknown }> {
  const res = await request(`${server.url}${path}`);
  return { status: res.status, json: res.body === '' ? undefined : JSON.parse(res.body) };
}

describe("Alertmanager API v2 (amtool's and Grafana's view)", () => {
  it('GET /api/v2/alerts: gettableAlerts with receivers and status; filters and the silenced flag as Alertmanager', async () => {
    const all = await get('/api/v2/alerts');
    expect(all.status).toBe(200);
    expect(all.json).toEqual([
      {
        labels: bank1.labels,
        annotations: bank1.annotations,
        receivers: [{ name: 'mail' }, { name: 'ops' }],
        fingerprint: bank1.fingerprint,
        startsAt: new Date(NOW - 60_000).toISOString(),
        updatedAt: new Date(NOW).toISOString(),
        endsAt: new Date(NOW + 300_000).toISOString(),
        generatorURL: '',
        status: { state: 'active', silencedBy: [], inhibitedBy: [], mutedBy: [] },
      },
      expect.objectContaining({ fingerprint: bank2.fingerprint, status: { state: 'suppressed', silencedBy: [silence.id], inhibitedBy: [], mutedBy: [] } }),
    ]);
    const fps = async (q: string) => ((await get(`/api/v2/alerts?${q}`)).json as Array<{ fingerprint: string }>).map((a) => a.fingerprint);
    expect(await fps('silenced=false')).toEqual([bank1.fingerprint]);
    expect(await fps('active=false')).toEqual([bank2.fingerprint]);
    expect(await fps(`filter=${encodeURIComponent('user=~"BANK[12]"')}&filter=${encodeURIComponent('severity="warning"')}`)).toEqual([bank2.fingerprint]);
    expect(await fps('receiver=ma.*')).toEqual([bank1.fingerprint]);
    const bad = await get(`/api/v2/alerts?filter=${encodeURIComponent('user=~"("')}`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('bad matcher format');
    expect((await get('/api/v2/alerts?silenced=maybe')).status).toBe(400);
  });

  it('GET /api/v2/alerts/groups, /status, /receivers and silences in Alertmanager shapes', async () => {
    const groups = await get('/api/v2/alerts/groups?silenced=false');
    expect(groups.json).toEqual([{ labels: { alertname: 'Burst' }, receiver: { name: 'ops' }, alerts: [expect.objectContaining({ fingerprint: bank1.fingerprint })] }]);
    const status = (await get('/api/v2/status')).json as { cluster: unknown; versionInfo: { version: string }; config: { original: string }; uptime: string };
    expect(status.cluster).toEqual({ status: 'disabled', peers: [] });
    expect(status.versionInfo.version).toBe('1.2.3');
    expect(status.uptime).toBe(new Date(NOW - 5000).toISOString());
    expect(status.config.original).toContain('receiver: "ops"');
    expect(status.config.original).not.toContain('console');
    expect((await get('/api/v2/receivers')).json).toEqual([{ name: 'ops' }, { name: 'mail' }]);
    expect((await get('/api/v2/silences')).json).toEqual([{ ...silence, annotations: {} }]);
    expect((await get(`/api/v2/silences?filter=${encodeURIComponent('user="BANK2"')}`)).json).toHaveLength(1);
    expect((await get(`/api/v2/silences?filter=${encodeURIComponent('user="BANK1"')}`)).json).toEqual([]);
    expect((await get(`/api/v2/silence/${silence.id}`)).json).toEqual({ ...silence, annotations: {} });
    expect((await get('/api/v2/silence/nope')).status).toBe(404);
    const del = await request(`${server.url}/api/v2/silence/${silence.id}`, { method: 'DELETE' });
    expect([del.status, del.body]).toEqual([200, '']);
  });
});
