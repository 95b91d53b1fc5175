import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fingerprint } from '../../src/alerts/fingerprint.js';
import type { DaemonApi } from '../../src/http/daemon-api.js';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import type { StatusPageAlert } from '../../src/http/status-page/status-page-data.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { SilenceStore } from '../../src/notify/mute/silence-store.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import type { IncomingHttpHeaders } from 'node:http';
import { rawRequest as request, type RawResponse } from '../helpers/raw-request.js';

/**
 * The status page over real HTTP with the real silence store: the page's forms are refused without the CSRF
 * token, cookie or with a foreign Origin, and with them create and expire silences that /api/v1/silences shows.
 */


const NOW = Date.parse('2026-11-23T12:00:00Z');
const LABELS = { alertname: 'TransferErrorBurst', severity: 'critical', mft_instance: 'PROD1', file: '<img src=x onerror=alert(1)>.RET' };
const silencesSchema = z.object({
  silences: z.array(
    z.object({
      id: z.string(),
      matchers: z.array(z.object({ name: z.string(), value: z.string(), isRegex: z.boolean(), isEqual: z.boolean() })),
      endsAt: z.string(),
      createdBy: z.string(),
      comment: z.string(),
      status: z.object({ state: z.string() }),
    }),
  ),
});

describe('status page over HTTP', () => {
  let server: RunningHttpServer;
  let store: SilenceStore;
  let clock: ManualClock;
  const fp = fingerprint(LABELS);

  beforeEach(async () => {
    clock = new ManualClock(NOW);
    store = new SilenceStore(clock, new MemoryStateStore(), silentLogger());
    const alert = (): StatusPageAlert => ({
      labels: LABELS,
      annotations: { summary: '5 failed transfers' },
      state: 'firing',
      activeAt: NOW - 60_000,
      fingerprint: fp,
      silencedBy: store.silencedBy(LABELS),
      inhibitedBy: [],
    });
    const api: DaemonApi = {
      ready: () => true,
      alerts: () => [],
      status: () => ({}),
      reload: async () => ({ ok: true }),
      silences: store,
      statusPage: () => ({ now: clock.now(), timezone: 'UTC', version: 'test', alerts: [alert()], expectations: [], sources: [], sends: [], silences: store.list() }),
    };
    server = await startHttpServer({ listen: '127.0.0.1:0', logger: silentLogger(), metrics: new TransferWatchMetrics({ maxSeries: 1000, version: 'test' }), api });
  });

  afterEach(async () => {
    await server.close();
  });

  async function page(): Promise<{ body: string; token: string; cookie: string; headers: IncomingHttpHeaders }> {
    const res = await request(`${server.url}/`);
    expect(res.status).toBe(200);
    const token = /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
    const setCookie = res.headers['set-cookie']?.[0] ?? '';
    return { body: res.body, token, cookie: setCookie.split(';')[0] ?? '', headers: res.headers };
  }

  function post(path: string, fields: Record<string, string>, headers: Record<string, string>): Promise<RawResponse> {
    return request(`${server.url}${path}`, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  }

  async function apiSilences() {
    const res = await request(`${server.url}/api/v1/silences`);
    return silencesSchema.parse(JSON.parse(res.body)).silences;
  }

  it('serves the page with a nonce CSP, no-store, a SameSite=Strict HttpOnly cookie, and the hostile label as text', async () => {
    const { body, token, headers } = await page();
    const csp = String(headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(body).toContain(`<script nonce="${nonce ?? ''}">`);
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['set-cookie']?.[0]).toMatch(new RegExp(`^tw_csrf=${token}; Path=/; SameSite=Strict; HttpOnly$`));
    expect(token.length).toBeGreaterThanOrEqual(40);
    expect(body).toContain('&lt;img src=x onerror=alert(1)&gt;.RET');
    expect(body).not.toContain('<img');
    // A new nonce per response.
    const again = await page();
    expect(String(again.headers['content-security-policy'])).not.toBe(csp);
  });

  it('refuses a silence without the token, without the cookie, with a wrong token, or from another origin (403), and creates none', async () => {
    const { token, cookie } = await page();
    const fields = { fingerprint: fp, duration: '2h', author: 'ana', comment: 'maintenance' };
    const origin = server.url;
    const attempts: Array<[Record<string, string>, Record<string, string>]> = [
      [fields, { cookie, origin }], // no token field
      [{ ...fields, csrf: token }, { origin }], // no cookie
      [{ ...fields, csrf: `${token.slice(0, -1)}x` }, { cookie: `tw_csrf=${token.slice(0, -1)}x`, origin }], // both wrong
      [{ ...fields, csrf: token }, { cookie, origin: 'http://evil.example' }],
      [{ ...fields, csrf: token }, { cookie, referer: 'http://evil.example/page' }],
      [{ ...fields, csrf: token }, { cookie, origin: 'null' }],
      [{ ...fields, csrf: token }, { cookie, 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [form, headers] of attempts) {
      const res = await post('/-/ui/silences', form, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.headers['content-type']).toContain('text/html');
    }
    expect(await apiSilences()).toEqual([]);
  });

  it('creates a silence of exactly this alert with the token, redirects back with 303, and the page and API show it', async () => {
    const { token, cookie } = await page();
    const res = await post(
      '/-/ui/silences',
      { csrf: token, fingerprint: fp, duration: '2h', author: 'ana <b>', comment: 'maintenance <script>x</script>' },
      { cookie, origin: server.url, referer: `${server.url}/` },
    );
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/?notice=silenced');

    const silences = await apiSilences();
    expect(silences).toHaveLength(1);
    const [silence] = silences;
    expect(silence?.status.state).toBe('active');
    expect(silence?.createdBy).toBe('ana <b>');
    expect(silence?.comment).toBe('maintenance <script>x</script>');
    expect(Date.parse(silence?.endsAt ?? '')).toBe(NOW + 2 * 3_600_000);
    expect(Object.fromEntries((silence?.matchers ?? []).map((m) => [m.name, m.value]))).toEqual(LABELS);
    expect(silence?.matchers.every((m) => m.isEqual && !m.isRegex)).toBe(true);

    const after = await request(`${server.url}/?notice=silenced`);
    expect(after.body).toContain('Silence created.');
    expect(after.body).toContain('<span class="badge silenced">silenced</span>');
    expect(after.body).toContain('maintenance &lt;script&gt;x&lt;/script&gt;');
    expect(after.body).not.toContain('<script>x');

    // Expire it from the page.
    const expired = await post('/-/ui/silences/expire', { csrf: token, id: silence?.id ?? '' }, { cookie, origin: server.url });
    expect(expired.status).toBe(303);
    expect(expired.headers.location).toBe('/?notice=expired');
    expect((await apiSilences())[0]?.status.state).toBe('expired');
    expect((await request(`${server.url}/`)).body).not.toContain('<span class="badge silenced">silenced</span>');
  });

  it('refuses an expire without the token and says why a silence was not created', async () => {
    const { token, cookie } = await page();
    const created = await store.create({ matchers: ['alertname="X"'], endsAt: new Date(NOW + 3_600_000).toISOString(), createdBy: 'a', comment: 'c' });
    expect((await post('/-/ui/silences/expire', { id: created.id }, { cookie })).status).toBe(403);
    expect(store.get(created.id)?.status.state).toBe('active');

    const noComment = await post('/-/ui/silences', { csrf: token, fingerprint: fp, duration: '1h', author: 'ana', comment: '  ' }, { cookie });
    expect(noComment.status).toBe(400);
    expect(noComment.body).toContain('comment is required');
    const gone = await post('/-/ui/silences', { csrf: token, fingerprint: 'no-such', duration: '1h', author: 'ana', comment: 'x' }, { cookie });
    expect(gone.status).toBe(404);
    const badDuration = await post('/-/ui/silences', { csrf: token, fingerprint: fp, duration: '90d', author: 'ana', comment: 'x' }, { cookie });
    expect(badDuration.status).toBe(400);
    const json = await request(`${server.url}/-/ui/silences`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', cookie } });
    expect(json.status).toBe(415);
    expect(store.list().map((s) => s.id)).toEqual([created.id]);
  });
});
