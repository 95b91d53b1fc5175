import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { HEAVY_READS_AT_ONCE, HEAVY_READS_QUEUED } from '../../src/http/heavy-read-limiter.js';
import type { HistoryReader } from '../../src/http/history-routes.js';
import { startHttpServer } from '../../src/http/http-server.js';
import { TransferWatchMetrics } from '../../src/metrics/transfer-watch-metrics.js';
import { silentLogger } from '../../src/util/logger.js';

describe('heavy reads of the history database', () => {
  it('a few at once, a bounded line, then 429 with Retry-After; the health check is answered meanwhile', async () => {
    let running = 0;
    let most = 0;
    const slow = async <T>(value: T): Promise<T> => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 300));
      running -= 1;
      return value;
    };
    const history: HistoryReader = {
      alertEvents: () => slow({ items: [], next: null }),
      attempts: () => slow({ items: [], next: null }),
      silenceEvents: () => slow({ items: [], next: null }),
      oncall: () => slow({ rows: [], truncated: false }),
    };
    const server = await startHttpServer({
      listen: '127.0.0.1:0',
      logger: silentLogger(),
      metrics: new TransferWatchMetrics({ maxSeries: 100, version: 't', collectDefault: false }),
      api: { ready: () => true, alerts: () => [], status: () => ({}), reload: async () => ({ ok: true }), silences: { list: () => [], get: () => undefined, create: async (x) => x, expire: async () => false }, history },
    });
    try {
      const requests = Array.from({ length: 20 }, () => fetch(`${server.url}/api/v1/history/alerts`));
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(200);
      const answers = await Promise.all(requests);
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(HEAVY_READS_AT_ONCE + HEAVY_READS_QUEUED);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20 - HEAVY_READS_AT_ONCE - HEAVY_READS_QUEUED);
      const refused = answers.find((r) => r.status === 429);
      expect(refused?.headers.get('retry-after')).toBe('2');
      expect(await refused?.json()).toMatchObject({ error: expect.stringContaining('too many SLA and history reads') });
      expect(most).toBe(HEAVY_READS_AT_ONCE);
    } finally {
      await server.close();
    }
  });

  it('is fair between clients: one flooding the port fills its own line, another is answered in its turn (contract 12a)', async () => {
    const started: string[] = [];
    // The reads hold until the flood has been sorted into answered and refused (a timer let the first reads end
    // before the 40th request arrived on a loaded machine, and more than the line's room was answered).
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const history: HistoryReader = {
      alertEvents: async (q) => {
        started.push(String(q.limit));
        await gate;
        await new Promise((r) => setTimeout(r, 10));
        return { items: [], next: null };
      },
      attempts: async () => ({ items: [], next: null }),
      silenceEvents: async () => ({ items: [], next: null }),
      oncall: async () => ({ rows: [], truncated: false }),
    };
    const server = await startHttpServer({
      listen: '127.0.0.1:0',
      logger: silentLogger(),
      metrics: new TransferWatchMetrics({ maxSeries: 100, version: 't', collectDefault: false }),
      api: { ready: () => true, alerts: () => [], status: () => ({}), reload: async () => ({ ok: true }), silences: { list: () => [], get: () => undefined, create: async (x) => x, expire: async () => false }, history },
    });
    // Two clients without authentication: two source addresses of the loopback network. A's reads ask for limit=1, B's for limit=2.
    const get = (from: string, limit: number): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(`${server.url}/api/v1/history/alerts?limit=${limit}`, { localAddress: from }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      let refused = 0;
      const flood = Array.from({ length: 40 }, () =>
        get('127.0.0.1', 1).then((status) => {
          if (status === 429) refused++;
          return status;
        }),
      );
      // Every flooding request answered 429 or held: the line is full.
      const full = 40 - HEAVY_READS_AT_ONCE - HEAVY_READS_QUEUED;
      for (let waited = 0; refused < full && waited < 10_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      const otherReads = Promise.all([get('127.0.0.2', 2), get('127.0.0.2', 2)]);
      await new Promise((r) => setTimeout(r, 300));
      release();
      const other = await otherReads;
      const flooded = await Promise.all(flood);
      // The other client is never refused for the flood, and its reads are not last in line: they start as soon as a
      // turn goes round, before the flooding client's line is done.
      expect(other).toEqual([200, 200]);
      expect(flooded.filter((s) => s === 200)).toHaveLength(HEAVY_READS_AT_ONCE + HEAVY_READS_QUEUED);
      expect(flooded.filter((s) => s === 429)).toHaveLength(40 - HEAVY_READS_AT_ONCE - HEAVY_READS_QUEUED);
      const firstOfOther = started.indexOf('2');
      expect(firstOfOther).toBeGreaterThan(-1);
      expect(firstOfOther).toBeLessThan(HEAVY_READS_AT_ONCE + 2);
      expect(started.lastIndexOf('1')).toBeGreaterThan(started.lastIndexOf('2'));
    } finally {
      await server.close();
    }
  });
});
