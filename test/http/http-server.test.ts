import { Agent, get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import type { DaemonApi } from '../../src/http/daemon-api.js';
import { MAX_BODY_BYTES } from '../../src/http/read-body.js';
import { COMPRESS_MIN_BYTES } from '../../src/http/response-encoding.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { TransferWatchError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { rawRequest as request } from '../helpers/raw-request.js';


interface FakeSilence {
  id: string;
  matchers: unknown;
}

class FakeDaemon implements DaemonApi {
  isReady = false;
  reloadResult: { ok: boolean; error?: string } = { ok: true };
  reloads = 0;
  statusValue: unknown = { sources: [{ name: 'prod', streams: { failures: { up: true } } }] };
  alertsValue: unknown[] = [{ labels: { alertname: 'Burst' }, annotations: {}, state: 'firing', activeAt: 1, fingerprint: 'f1' }];
  readonly store = new Map<string, FakeSilence>();

  ready(): boolean {
    return this.isReady;
  }
  alerts(): unknown[] {
    return this.alertsValue;
  }
  status(): unknown {
    return this.statusValue;
  }
  async reload(): Promise<{ ok: boolean; error?: string }> {
    this.reloads += 1;
    return this.reloadResult;
  }
  silences = {
    list: (): unknown[] => [...this.store.values()],
    get: (id: string): unknown => this.store.get(id),
    create: async (input: unknown): Promise<unknown> => {
      if (typeof input !== 'object' || input === null || !('matchers' in input)) {
        throw new TransferWatchError('silence_invalid', 'matchers: required');
      }
      const silence = { id: `s${this.store.size + 1}`, matchers: input.matchers };
      this.store.set(silence.id, silence);
      return silence;
    },
    expire: async (id: string): Promise<boolean> => this.store.delete(id),
  };
}

let server: RunningHttpServer;
let daemon: FakeDaemon;
let metrics: TransferWatchMetrics;

beforeEach(async () => {
  daemon = new FakeDaemon();
  metrics = new TransferWatchMetrics({ maxSeries: 100, version: '0.0.0-test', collectDefault: false });
  metrics.setSourceUp('prod', true);
  server = await startHttpServer({ listen: '127.0.0.1:0', logger: silentLogger(), metrics, api: daemon });
});

afterEach(async () => {
  await server.close();
});

const JSON_TYPE = 'application/json; charset=utf-8';

describe('http server: read-only endpoints', () => {
  it('reports a URL with the real port', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('serves /metrics with the Prometheus content type', async () => {
    const res = await request(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(metrics.contentType);
    expect(res.body).toContain('transfer_watch_source_up{source="prod"} 1');
  });

  it('gzips /metrics and the API for a client that accepts it, as Prometheus does, honouring q-values; pages and small answers go as they are', async () => {
    // Enough series that the answer is over the compression threshold.
    for (let i = 0; i < 40; i++) metrics.setSourceUp(`source-${i}`, i % 2 === 0);
    const plain = await request(`${server.url}/metrics`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['vary']).toBe('Accept-Encoding');
    expect(Buffer.byteLength(plain.body)).toBeGreaterThan(COMPRESS_MIN_BYTES);

    const zipped = await new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      httpGet(`${server.url}/metrics`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe(metrics.contentType);
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    expect(zipped.body.length).toBeLessThan(Buffer.byteLength(plain.body) / 2);
    expect(gunzipSync(zipped.body).toString('utf8')).toBe(plain.body);

    // gzip refused by its q-value, or only an encoding we do not speak: the text as it is.
    for (const accept of ['gzip;q=0, identity', 'br']) {
      const res = await request(`${server.url}/metrics`, { headers: { 'accept-encoding': accept } });
      expect(res.headers['content-encoding'], accept).toBeUndefined();
      expect(res.body).toBe(plain.body);
    }
    // Pages carry the form token beside text a link can choose: never compressed (BREACH), whatever their size.
    daemon.alertsValue = Array.from({ length: 50 }, (_, i) => ({ labels: { alertname: `Burst${i}` }, annotations: {}, state: 'firing', activeAt: 1, fingerprint: `f${i}` }));
    const json = await request(`${server.url}/api/v1/alerts`, { headers: { 'accept-encoding': 'gzip' } });
    expect(json.headers['content-encoding']).toBe('gzip');
    const page = await request(`${server.url}/sla`, { headers: { 'accept-encoding': 'gzip' } });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(Buffer.byteLength(page.body)).toBeGreaterThan(COMPRESS_MIN_BYTES);
    expect(page.headers['content-encoding']).toBeUndefined();
    // Below the threshold nothing is compressed even when gzip is welcome.
    const health = await request(`${server.url}/healthz`, { headers: { 'accept-encoding': 'gzip' } });
    expect(health.headers['content-encoding']).toBeUndefined();
    expect(health.body).toBe('ok\n');
  });

  it('answers /healthz always and /readyz by readiness', async () => {
    expect((await request(`${server.url}/healthz`)).status).toBe(200);
    const notReady = await request(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(notReady.headers['content-type']).toBe('text/plain; charset=utf-8');
    daemon.isReady = true;
    expect((await request(`${server.url}/readyz`)).status).toBe(200);
    expect((await request(`${server.url}/healthz`)).status).toBe(200);
  });

  it('serves alerts wrapped in {alerts} (with today\'s expected files) and the status as given, as JSON', async () => {
    const alerts = await request(`${server.url}/api/v1/alerts`);
    expect(alerts.status).toBe(200);
    expect(alerts.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(alerts.body)).toEqual({ alerts: daemon.alertsValue, expected: [] });
    const status = await request(`${server.url}/api/v1/status`);
    expect(status.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(status.body)).toEqual(daemon.statusValue);
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await request(`${server.url}/api/v1/alerts`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(Number(res.headers['content-length'])).toBeGreaterThan(0);
    expect(res.body).toBe('');
  });

  it('serves a small index of links at /', async () => {
    const res = await request(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('href="/metrics"');
  });
});

describe('http server: runbooks', () => {
  it('serves the shipped runbook of an alert as Markdown, and 404 for an unknown or crafted name', async () => {
    const res = await request(`${server.url}/runbooks/TransferErrorBurst`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.body).toMatch(/^# TransferErrorBurst\n/);
    for (const path of ['/runbooks/NoSuchAlert', '/runbooks/..%2F..%2Fpackage', '/runbooks/README.md', '/runbooks/%2Fetc%2Fpasswd']) {
      expect((await request(`${server.url}${path}`)).status, path).toBe(404);
    }
  });
});

describe('http server: errors', () => {
  it('answers 404 as JSON for an unknown path', async () => {
    for (const path of ['/nope', '/api/v1/alerts/extra', '/metricsx']) {
      const res = await request(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(JSON.parse(res.body)).toEqual({ status: 'error', error: 'not found' });
    }
  });

  it('answers 405 with Allow for a known path and a wrong method', async () => {
    const post = await request(`${server.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
    expect(JSON.parse(post.body)).toMatchObject({ status: 'error' });
    const get = await request(`${server.url}/-/reload`);
    expect(get.status).toBe(405);
    expect(get.headers['allow']).toBe('POST');
    const put = await request(`${server.url}/api/v1/silences/s1`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers['allow']).toBe('GET, DELETE, HEAD');
    expect(daemon.reloads).toBe(0);
  });

  it('refuses a body over the limit with 413, declared or streamed', async () => {
    const big = Buffer.alloc(MAX_BODY_BYTES + 1, 'a');
    const declared = await request(`${server.url}/api/v1/silences`, {
      method: 'POST',
      body: big,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ status: 'error' });
    const chunked = await request(`${server.url}/-/reload`, {
      method: 'POST',
      body: big,
      headers: { 'Transfer-Encoding': 'chunked' },
    });
    expect(chunked.status).toBe(413);
    expect(daemon.reloads).toBe(0);
    expect(daemon.store.size).toBe(0);
  });

  it('answers 500 without internals when a handler throws unexpectedly', async () => {
    daemon.statusValue = undefined;
    daemon.status = () => {
      throw new Error('secret /var/lib/thing password=hunter2');
    };
    const res = await request(`${server.url}/api/v1/status`);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ status: 'error', error: 'internal error' });
  });
});

describe('http server: reload', () => {
  it('answers 200 {status:"success"} after a good reload', async () => {
    const res = await request(`${server.url}/-/reload`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'success' });
    expect(daemon.reloads).toBe(1);
  });

  it('answers 500 with the error after a failed reload', async () => {
    daemon.reloadResult = { ok: false, error: 'rules/a.yaml:3:5: unknown key "thresold"' };
    const res = await request(`${server.url}/-/reload`, { method: 'POST' });
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(JSON.parse(res.body)).toEqual({ status: 'error', error: 'rules/a.yaml:3:5: unknown key "thresold"' });
  });
});

describe('http server: silences', () => {
  it('creates, lists, gets and expires a silence', async () => {
    const created = await request(`${server.url}/api/v1/silences`, {
      method: 'POST',
      body: JSON.stringify({ matchers: ['alertname="Burst"'] }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(created.status).toBe(200);
    const body: unknown = JSON.parse(created.body);
    expect(body).toMatchObject({ status: 'success', silenceID: 's1', silence: { id: 's1' } });

    const list = await request(`${server.url}/api/v1/silences`);
    expect(JSON.parse(list.body)).toEqual({ silences: [{ id: 's1', matchers: ['alertname="Burst"'] }] });
    const one = await request(`${server.url}/api/v1/silences/s1`);
    expect(one.status).toBe(200);
    expect(JSON.parse(one.body)).toEqual({ id: 's1', matchers: ['alertname="Burst"'] });

    const del = await request(`${server.url}/api/v1/silences/s1`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect((await request(`${server.url}/api/v1/silences/s1`)).status).toBe(404);
    expect((await request(`${server.url}/api/v1/silences/s1`, { method: 'DELETE' })).status).toBe(404);
  });

  it('answers 400 with the message for an invalid silence, bad JSON or an empty body; 415 when not sent as JSON', async () => {
    const json = { 'content-type': 'application/json' };
    const plain = await request(`${server.url}/api/v1/silences`, { method: 'POST', body: '{"matchers":[]}', headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(415);
    const invalid = await request(`${server.url}/api/v1/silences`, { method: 'POST', body: '{"comment":"x"}', headers: json });
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.body)).toEqual({ status: 'error', error: 'matchers: required' });
    const badJson = await request(`${server.url}/api/v1/silences`, { method: 'POST', body: '{"matchers":', headers: json });
    expect(badJson.status).toBe(400);
    expect(JSON.parse(badJson.body)).toMatchObject({ status: 'error' });
    const empty = await request(`${server.url}/api/v1/silences`, { method: 'POST', headers: json });
    expect(empty.status).toBe(400);
    expect(daemon.store.size).toBe(0);
  });

  it('answers 400 (not 500 with a stack) for a JSON body nested 20,000 deep, and 503 saying so when the state store refuses the write', async () => {
    const json = { 'content-type': 'application/json' };
    const deep = await request(`${server.url}/api/v1/silences`, { method: 'POST', body: `${'['.repeat(20_000)}${']'.repeat(20_000)}`, headers: json });
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.body)).toEqual({ status: 'error', error: 'request body is nested deeper than 32 levels' });
    const v2 = await request(`${server.url}/api/v1/silences`, { method: 'POST', body: `{"matchers":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`, headers: json });
    expect(v2.status).toBe(400);
    daemon.silences.create = async () => {
      throw new TransferWatchError('state_write', 'cannot write state file /var/lib/tw/silences.json: EROFS');
    };
    const refused = await request(`${server.url}/api/v1/silences`, { method: 'POST', body: '{"matchers":[]}', headers: json });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.body).error).toMatch(/^not saved: the state store refused the write/);
    expect(refused.body).not.toContain('/var/lib');
  });

  it('refuses a GET whose body is over the limit (declared or chunked) instead of draining it', async () => {
    const big = Buffer.alloc(MAX_BODY_BYTES + 1, 'a');
    const declared = await request(`${server.url}/api/v1/alerts`, { method: 'GET', body: big, headers: { 'Content-Length': String(big.length) } });
    expect(declared.status).toBe(413);
    const chunked = await request(`${server.url}/healthz`, { method: 'GET', body: big, headers: { 'Transfer-Encoding': 'chunked' } });
    expect(chunked.status).toBe(413);
    const small = await request(`${server.url}/api/v1/alerts`, { method: 'GET', body: '{}', headers: { 'Content-Length': '2' } });
    expect(small.status).toBe(200);
  });

  it('decodes the id from the path', async () => {
    daemon.store.set('a b', { id: 'a b', matchers: [] });
    expect((await request(`${server.url}/api/v1/silences/a%20b`)).status).toBe(200);
    expect((await request(`${server.url}/api/v1/silences/%E0%A4%A`)).status).toBe(400);
  });
});

describe('http server: lifecycle', () => {
  it('closes while a keep-alive connection is open', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const res = await request(`${server.url}/healthz`, { agent });
      expect(res.status).toBe(200);
      expect(res.headers['connection']).toBe('keep-alive');
      await server.close();
      await expect(request(`${server.url}/healthz`)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      agent.destroy();
      // afterEach closes again; make that a no-op on a fresh server.
      server = await startHttpServer({ listen: '127.0.0.1:0', logger: silentLogger(), metrics, api: daemon });
    }
  });

  it('rejects a malformed listen address and a port already in use', async () => {
    await expect(
      startHttpServer({ listen: 'nonsense', logger: silentLogger(), metrics, api: daemon }),
    ).rejects.toMatchObject({ code: 'http_bad_listen' });
    await expect(
      startHttpServer({ listen: `127.0.0.1:${server.port}`, logger: silentLogger(), metrics, api: daemon }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('http server: /metrics renderings', () => {
  /**
   * Metrics whose rendering is counted and shows its number. Each takes 20 ms of CPU, as 10,000 series do: the
   * requests of a flood pile up meanwhile, which is what lets them share the next one.
   */
  function countingMetrics(): { source: { contentType: string; metrics(): Promise<string> }; renderings: () => number } {
    let n = 0;
    const render = (): Promise<string> => {
      const until = performance.now() + 20;
      while (performance.now() < until) {
        // busy, as a real rendering is
      }
      return Promise.resolve(`rendering ${++n}\n`);
    };
    return { source: { contentType: 'text/plain; version=0.0.4; charset=utf-8', metrics: render }, renderings: () => n };
  }

  it('a burst of concurrent scrapes shares renderings; a scrape after a pause gets a fresh one', async () => {
    const counting = countingMetrics();
    const own = await startHttpServer({ listen: '127.0.0.1:0', logger: silentLogger(), metrics: counting.source, api: daemon });
    const sockets: Socket[] = [];
    try {
      expect((await request(`${own.url}/metrics`)).body).toBe('rendering 1\n');
      // 50 connections open first, then 50 requests written in one go: they reach the server together, as a flood's do.
      for (let i = 0; i < 50; i++) sockets.push(await new Promise<Socket>((resolve, reject) => {
        const socket = connect(own.port, '127.0.0.1', () => resolve(socket)).once('error', reject);
      }));
      const answers = sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let text = '';
            socket.setEncoding('utf8').on('data', (chunk: string) => {
              text += chunk;
              const body = /\r\n\r\n(rendering \d+\n)/.exec(text)?.[1];
              if (body) resolve(body);
            });
          }),
      );
      for (const socket of sockets) socket.write('GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n');
      const bodies = await Promise.all(answers);
      expect(bodies.every((b) => /^rendering \d+\n$/.test(b))).toBe(true);
      expect(counting.renderings() - 1).toBeLessThan(10);
      // A lone scrape later gets a rendering made for it, never an old one.
      await new Promise((r) => setTimeout(r, 200));
      const before = counting.renderings();
      expect((await request(`${own.url}/metrics`)).body).toBe(`rendering ${before + 1}\n`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await own.close();
    }
  });
});
