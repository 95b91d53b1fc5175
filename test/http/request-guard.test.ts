import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import type { DaemonApi } from '../../src/http/daemon-api.js';
import { HttpSecurity } from '../../src/http/security/http-security.js';
import { webConfigSchema } from '../../src/http/security/web-config.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { silentLogger } from '../../src/util/logger.js';
import { rawRequest as request } from '../helpers/raw-request.js';

/**
 * The hostile-client probe's findings (issue 14), each against a real server: a cross-site silence, a
 * cross-site reload, DNS rebinding, and writes from another machine without authentication.
 */
describe('request guard: no anonymous or cross-site writes', () => {
  let server: RunningHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  async function start(opts: { peer?: string; allowedHosts?: string[]; authenticated?: boolean } = {}) {
    const created: unknown[] = [];
    let reloads = 0;
    const api: DaemonApi = {
      ready: () => true,
      alerts: () => [],
      status: () => ({}),
      reload: async () => {
        reloads++;
        return { ok: true };
      },
      silences: {
        list: () => created,
        get: () => undefined,
        create: async (input) => {
          created.push(input);
          return { id: 's1' };
        },
        expire: async () => true,
      },
      statusPage: () => ({ now: 0, timezone: 'UTC', version: 't', alerts: [], expectations: [], sources: [], sends: [], silences: [] }),
    };
    const webConfig = opts.authenticated ? { file: 'web.yml', config: webConfigSchema.parse({}), tls: undefined, authenticates: true } : undefined;
    const security = new HttpSecurity({
      webConfig,
      allowedHosts: opts.allowedHosts ?? [],
      logger: silentLogger(),
      ...(opts.peer ? { peerAddress: () => opts.peer } : {}),
    });
    server = await startHttpServer({ listen: '127.0.0.1:0', logger: silentLogger(), metrics: new TransferWatchMetrics({ maxSeries: 10, version: 't', collectDefault: false }), api, security });
    return { created, reloads: () => reloads, url: server.url, port: server.port };
  }

  const everything = JSON.stringify({
    matchers: [{ name: 'alertname', value: '.+', isRegex: true, isEqual: true }],
    startsAt: '2026-01-01T00:00:00Z',
    endsAt: '2036-01-01T00:00:00Z',
    createdBy: 'evil',
    comment: 'x',
  });

  it('refuses a cross-site silence (text/plain, foreign Origin, Sec-Fetch-Site) and a cross-site reload', async () => {
    const s = await start();
    const attempts: Array<Record<string, string>> = [
      { 'content-type': 'text/plain', origin: 'http://evil.example' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/json', origin: 'http://evil.example' },
      { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attempts) {
      for (const path of ['/api/v1/silences', '/api/v2/silences']) {
        const res = await request(`${s.url}${path}`, { method: 'POST', body: everything, headers });
        expect([403, 415, 404], `${path} ${JSON.stringify(headers)}`).toContain(res.status);
      }
    }
    const reload = await request(`${s.url}/-/reload`, { method: 'POST', headers: { origin: 'http://evil.example' } });
    expect(reload.status).toBe(403);
    expect(s.created).toEqual([]);
    expect(s.reloads()).toBe(0);
    // The same silence from this machine, as JSON, is fine.
    expect((await request(`${s.url}/api/v1/silences`, { method: 'POST', body: everything, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    expect((await request(`${s.url}/-/reload`, { method: 'POST' })).status).toBe(200);
  });

  it('defeats DNS rebinding: a foreign Host gets neither the page (with its form token) nor a write', async () => {
    const s = await start();
    const page = await request(`${s.url}/`, { headers: { host: `evil.example:${s.port}` } });
    expect(page.status).toBe(403);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.body).toContain('server.allowed_hosts');
    const write = await request(`${s.url}/api/v1/silences`, {
      method: 'POST',
      body: everything,
      headers: { host: `evil.example:${s.port}`, origin: `http://evil.example:${s.port}`, 'content-type': 'application/json' },
    });
    expect(write.status).toBe(403);
    expect(s.created).toEqual([]);
    // Its own names work: IP literal, localhost, and names configured.
    expect((await request(`${s.url}/`)).status).toBe(200);
    expect((await request(`${s.url}/`, { headers: { host: `localhost:${s.port}` } })).status).toBe(200);
    await server?.close();
    const t = await start({ allowedHosts: ['tw.example.com'] });
    expect((await request(`${t.url}/`, { headers: { host: `tw.example.com` } })).status).toBe(200);
  });

  it('without authentication, writes from another machine are refused with 403 saying how to enable them; reads stay open', async () => {
    const s = await start({ peer: '10.1.2.3' });
    const res = await request(`${s.url}/api/v1/silences`, { method: 'POST', body: everything, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toContain('server.web_config_file');
    expect((await request(`${s.url}/-/reload`, { method: 'POST' })).status).toBe(403);
    expect((await request(`${s.url}/api/v1/silences/s1`, { method: "DELETE" })).status).toBe(403);
    expect((await request(`${s.url}/api/v1/alerts`)).status).toBe(200);
    expect((await request(`${s.url}/metrics`)).status).toBe(200);
    expect(s.created).toEqual([]);
    await server?.close();
    const authed = await start({ peer: '10.1.2.3', authenticated: true });
    expect((await request(`${authed.url}/api/v1/silences`, { method: 'POST', body: everything, headers: { 'content-type': 'application/json' } })).status).toBe(200);
  });
});
