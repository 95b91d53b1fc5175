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
});
