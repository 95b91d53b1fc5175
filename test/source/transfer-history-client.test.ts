import { getEventListeners } from 'node:events';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SourceError } from '../../src/source/source-error.js';
import { TransferHistoryClient, type ClientHooks } from '../../src/source/transfer-history-client.js';
import { silentLogger } from '../../src/util/logger.js';
import { capturingLogger, collect, query, sourceConfig, T0 } from './client-fixtures.js';
import { rejectionOf } from '../helpers/rejection.js';
import { json, startFakeService, wireRecord, wireRecords, type FakeServiceOptions, type FakeTransferService } from './fake-transfer-service.js';

const servers: FakeTransferService[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(options: FakeServiceOptions = {}): Promise<FakeTransferService> {
  const s = await startFakeService(options);
  servers.push(s);
  return s;
}

function client(baseUrl: string, extra: { hooks?: ClientHooks; retries?: number; timeout?: number; logger?: ReturnType<typeof silentLogger>; maxRecords?: number } = {}) {
  const retryDelays: Array<[number, number | undefined]> = [];
  const c = new TransferHistoryClient({
    source: sourceConfig(baseUrl, { retries: extra.retries ?? 3, timeout: extra.timeout ?? 2000, ...(extra.maxRecords ? { max_records_per_window: extra.maxRecords } : {}) }),
    logger: extra.logger ?? silentLogger(),
    hooks: extra.hooks,
    retryDelay: (attempt, retryAfterMs) => {
      retryDelays.push([attempt, retryAfterMs]);
      return 0;
    },
  });
  return { c, retryDelays };
}

const failure = (p: Promise<unknown>): Promise<SourceError> => rejectionOf(p, SourceError);

describe('TransferHistoryClient pagination', () => {
  it('follows prefix-less next links under a base path, restoring dropped and emptied filters', async () => {
    const wanted = wireRecords(5, '2024-05-01T10:00:00Z', { INSTANCE: 'PROD1', USUARIO: 'BANK1', EVENTO: 7, RESULTADO: 12 });
    const noise = [
      ...wireRecords(3, '2024-05-01T10:00:00Z', { INSTANCE: 'PROD1', USUARIO: 'BANK1', EVENTO: 5, RESULTADO: 12 }),
      ...wireRecords(3, '2024-05-01T10:00:00Z', { INSTANCE: 'PROD1', USUARIO: 'BANK1', EVENTO: 7, RESULTADO: 0 }),
      ...wireRecords(3, '2024-05-01T10:00:00Z', { INSTANCE: 'PROD2', USUARIO: 'BANK2', EVENTO: 7, RESULTADO: 3 }),
    ];
    const s = await fake({ prefix: '/mft/api', records: [...noise.slice(0, 4), ...wanted, ...noise.slice(4)] });
    const { c } = client(s.baseUrl);
    const got = await collect(c, query({ results: -1, events: [7], instance: 'PROD1', user: 'BANK1', limit: 2 }));

    expect(got.transfers.map((t) => t.file)).toEqual(wanted.map((r) => r.NOMEARQUIVO));
    expect(got.dropped).toBe(0);
    expect(got.pages).toHaveLength(3);
    expect(s.requests.every((r) => r.path.startsWith('/mft/api/'))).toBe(true);
    expect(s.transfersRequests.map((r) => r.query.get('index'))).toEqual([null, '2', '4']);
    for (const r of s.transfersRequests) {
      expect(r.query.getAll('events')).toEqual(['7']);
      expect(r.query.get('results')).toBe('-1');
      expect(r.query.get('instance')).toBe('PROD1');
      expect(r.query.get('user')).toBe('BANK1');
      expect(r.query.get('limit')).toBe('2');
      expect(r.authorization).toBe('Bearer token-1');
    }
    expect(s.tokenRequests).toHaveLength(1);
  });

  it('sends the first request with repeated events, start/end in ms, tags and filename as given', async () => {
    const s = await fake();
    const { c } = client(s.baseUrl);
    await collect(c, query({ events: [5, 7], tags: 'a=b,c', filename: 'EXTRATO', results: 0, limit: 1000 }));
    const first = s.transfersRequests[0];
    expect(first?.query.getAll('events')).toEqual(['5', '7']);
    expect(first?.query.get('start')).toBe(String(T0));
    expect(first?.query.get('tags')).toBe('a=b,c');
    expect(first?.query.get('filename')).toBe('EXTRATO');
    expect(first?.query.get('results')).toBe('0');
  });

  it('drops records that do not match the query when the service ignores its filters', async () => {
    const records = [
      wireRecord({ NOMEARQUIVO: 'a', RESULTADO: 5 }),
      wireRecord({ NOMEARQUIVO: 'ok', RESULTADO: 0 }),
      wireRecord({ NOMEARQUIVO: 'other-instance', RESULTADO: 5, INSTANCE: 'X' }),
      wireRecord({ NOMEARQUIVO: 'other-event', RESULTADO: 5, EVENTO: 5 }),
      wireRecord({ NOMEARQUIVO: 'other-user', RESULTADO: 5, USUARIO: 'U' }),
    ];
    const s = await fake({ records, ignoreFilters: true });
    const { c } = client(s.baseUrl);
    const got = await collect(c, query({ results: -1, instance: 'PROD1', user: 'BANK1', events: [7] }));
    expect(got.transfers.map((t) => t.file)).toEqual(['a']);
    expect(got.dropped).toBe(4);
  });

  it('drops records outside [start, end] and keeps both ends inclusive', async () => {
    const at = (iso: string) => wireRecord({ DATAHORA: iso, NOMEARQUIVO: iso });
    const s = await fake({
      records: [at('2024-05-01T09:59:59.999Z'), at('2024-05-01T10:00:00Z'), at('2024-05-01T11:00:00Z'), at('2024-05-01T11:00:00.001Z')],
      ignoreFilters: true,
    });
    const { c } = client(s.baseUrl);
    const got = await collect(c, query({ start: Date.parse('2024-05-01T10:00:00Z'), end: Date.parse('2024-05-01T11:00:00Z') }));
    expect(got.transfers.map((t) => t.file)).toEqual(['2024-05-01T10:00:00Z', '2024-05-01T11:00:00Z']);
    expect(got.dropped).toBe(2);
  });

  it('reads numeric strings and zone-less timestamps (as UTC), normalising the record', async () => {
    const s = await fake({
      records: [wireRecord({ DATAHORA: '2024-05-01 12:30:00', EVENTO: '7', RESULTADO: '-1', TAMARQUIVO: ' 2048 ', DIAS: '3' })],
    });
    const { c } = client(s.baseUrl);
    const [t] = (await collect(c, query())).transfers;
    expect(t?.time).toBe(Date.parse('2024-05-01T12:30:00Z'));
    expect(t?.record.DATAHORA).toBe('2024-05-01T12:30:00.000Z');
    expect(t?.record.EVENTO).toBe(7);
    expect(t?.record.RESULTADO).toBe(-1);
    expect(t?.event).toBe('reception');
    expect(t?.result).toBe('error');
    expect(t?.size).toBe(2048);
    expect(t?.record.DIAS).toBe(3);
  });

  it('treats data: null as an empty page and ends', async () => {
    const s = await fake({ records: [] });
    const { c } = client(s.baseUrl);
    const got = await collect(c, query());
    expect(got.pages).toEqual([{ transfers: [], invalid: 0, invalidIds: [], dropped: 0 }]);
    expect(s.transfersRequests).toHaveLength(1);
  });

  it('counts and skips unreadable records, reporting each but logging once per page', async () => {
    const good = wireRecords(500, '2024-05-01T10:00:00Z');
    const bad = Array.from({ length: 500 }, (_, i) =>
      i % 2 === 0 ? wireRecord({ DATAHORA: 'yesterday' }) : wireRecord({ RESULTADO: 'n/a' }),
    );
    const records = good.flatMap((g, i) => [g, bad[i]]);
    const s = await fake({ records, ignoreFilters: true });
    const reasons: string[] = [];
    const log = capturingLogger();
    const { c } = client(s.baseUrl, { hooks: { onInvalidRecord: (r) => reasons.push(r) }, logger: log.logger });
    const got = await collect(c, query());
    expect(got.transfers).toHaveLength(500);
    expect(got.invalid).toBe(500);
    expect(reasons).toHaveLength(500);
    expect(new Set(reasons)).toEqual(new Set(['DATAHORA is not an ISO 8601 date-time', 'RESULTADO is missing or not an integer']));
    const warnings = log.lines().filter((l) => l.msg === 'skipped unreadable transfer records');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.invalid).toBe(500);
  });

  it('logs invalid records for the first pages only, then one summary for the rest', async () => {
    const records = Array.from({ length: 10 }, () => wireRecord({ EVENTO: 'x' }));
    const s = await fake({ records, ignoreFilters: true });
    const log = capturingLogger();
    const { c } = client(s.baseUrl, { logger: log.logger });
    const got = await collect(c, query({ limit: 2 }));
    expect(got.invalid).toBe(10);
    const lines = log.lines();
    expect(lines.filter((l) => l.msg === 'skipped unreadable transfer records')).toHaveLength(3);
    const summary = lines.filter((l) => l.msg === 'skipped more unreadable transfer records on further pages');
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ invalid: 4, pages: 2 });
  });

  it('counts non-object records as invalid', async () => {
    const s = await fake({ records: [null, 42, 'x', [], wireRecord()], ignoreFilters: true });
    const { c } = client(s.baseUrl);
    const got = await collect(c, query());
    expect(got.invalid).toBe(4);
    expect(got.transfers).toHaveLength(1);
  });

  it('refuses a next that was already followed (pagination_loop)', async () => {
    const s = await fake({ records: wireRecords(10, '2024-05-01T10:00:00Z'), nextLink: () => '/reports/v2/transfers?index=2' });
    const { c } = client(s.baseUrl);
    const err = await failure(collect(c, query({ limit: 2 })));
    expect(err.reason).toBe('pagination_loop');
    expect(s.transfersRequests).toHaveLength(2);
  });

  it('stops a never-ending pagination (a new index on every page) at max_records_per_window / limit pages: too_many_pages', async () => {
    let index = 1;
    const s = await fake({ records: wireRecords(3000, '2024-05-01T10:00:00Z'), nextLink: () => `/reports/v2/transfers?index=${++index}` });
    const { c } = client(s.baseUrl, { maxRecords: 1000 });
    const err = await failure(collect(c, query({ limit: 100 })));
    expect(err.reason).toBe('too_many_pages');
    expect(err.message).toContain('max_records_per_window');
    // 1000 records at 100 a page: 10 pages, and one more to see that it goes on.
    expect(s.transfersRequests).toHaveLength(11);
  });

  it('treats the same next with its parameters in another order as a loop', async () => {
    let n = 0;
    const s = await fake({
      records: wireRecords(10, '2024-05-01T10:00:00Z'),
      nextLink: () => (n++ % 2 === 0 ? `/reports/v2/transfers?index=2&limit=2&start=${T0}` : `/reports/v2/transfers?start=${T0}&limit=2&index=2`),
    });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query({ limit: 2 })))).reason).toBe('pagination_loop');
  });
});

describe('TransferHistoryClient next link safety', () => {
  it('refuses a next on another origin and never sends it the token', async () => {
    const foreign = await fake({ records: wireRecords(3, '2024-05-01T10:00:00Z') });
    const s = await fake({
      prefix: '/mft/api',
      records: wireRecords(4, '2024-05-01T10:00:00Z'),
      nextLink: (index) => `${foreign.origin}/mft/api/reports/v2/transfers?index=${index}`,
    });
    const { c } = client(s.baseUrl);
    const err = await failure(collect(c, query({ limit: 2 })));
    expect(err.reason).toBe('bad_next');
    expect(foreign.requests).toHaveLength(0);
  });

  it('refuses a protocol-relative next pointing at another host', async () => {
    const foreign = await fake();
    const host = new URL(foreign.origin).host;
    const s = await fake({ records: wireRecords(4, '2024-05-01T10:00:00Z'), nextLink: (i) => `//${host}/reports/v2/transfers?index=${i}` });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query({ limit: 2 })))).reason).toBe('bad_next');
    expect(foreign.requests).toHaveLength(0);
  });

  it('refuses a next on another path of the same origin', async () => {
    const s = await fake({ records: wireRecords(4, '2024-05-01T10:00:00Z'), nextLink: (i) => `/admin/export?index=${i}` });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query({ limit: 2 })))).reason).toBe('bad_next');
    expect(s.requests.filter((r) => r.kind === 'other')).toHaveLength(0);
  });

  it('accepts an absolute next on the same origin and path', async () => {
    let origin = '';
    const s = await fake({
      prefix: '/mft/api',
      records: wireRecords(3, '2024-05-01T10:00:00Z'),
      nextLink: (i, params) => `${origin}/mft/api/reports/v2/transfers?start=${params.get('start')}&end=${params.get('end')}&limit=2&index=${i}`,
    });
    origin = s.origin;
    const { c } = client(s.baseUrl);
    expect((await collect(c, query({ limit: 2 }))).transfers).toHaveLength(3);
  });

  it('does not follow redirects (the token could go with them)', async () => {
    const foreign = await fake();
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        res.writeHead(302, { location: `${foreign.origin}/reports/v2/transfers` });
        res.end();
        return true;
      },
    });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query()))).reason).toBe('invalid_response');
    expect(foreign.requests).toHaveLength(0);
  });
});

describe('TransferHistoryClient authentication', () => {
  it('posts a form-encoded password grant and reuses the token across paginations', async () => {
    const s = await fake({ records: wireRecords(3, '2024-05-01T10:00:00Z') });
    const { c } = client(s.baseUrl);
    await collect(c, query({ limit: 2 }));
    await collect(c, query({ limit: 2 }));
    expect(s.tokenRequests).toHaveLength(1);
    const form = new URLSearchParams(s.tokenRequests[0]?.body);
    expect(s.tokenRequests[0]?.contentType).toMatch(/^application\/x-www-form-urlencoded/);
    expect(Object.fromEntries(form)).toEqual({ grant_type: 'password', username: 'operator', password: 's3cret-pass' });
    expect(s.transfersRequests).toHaveLength(4);
  });

  it('survives a token revoked mid-pagination with exactly one re-authentication, refetching the same page', async () => {
    const s = await fake({
      records: wireRecords(6, '2024-05-01T10:00:00Z'),
      intercept: ({ request, transfersSeen, service }) => {
        if (request.kind === 'transfers' && transfersSeen === 1) service.revokeTokens();
        return false;
      },
    });
    const statuses: string[] = [];
    const { c } = client(s.baseUrl, { hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    const got = await collect(c, query({ limit: 2 }));
    expect(got.transfers).toHaveLength(6);
    expect(s.tokenRequests).toHaveLength(2);
    expect(s.transfersRequests.map((r) => [r.query.get('index'), r.authorization])).toEqual([
      [null, 'Bearer token-1'],
      ['2', 'Bearer token-1'],
      ['2', 'Bearer token-2'],
      ['4', 'Bearer token-2'],
    ]);
    expect(statuses).toEqual(['token:200', 'transfers:200', 'transfers:401', 'token:200', 'transfers:200', 'transfers:200']);
  });

  it('gives up with unauthorized when a fresh token is rejected too', async () => {
    const s = await fake({
      intercept: ({ request, res }) => (request.kind === 'transfers' ? json(res, 401, { error: 'no' }) : false),
    });
    const { c } = client(s.baseUrl);
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('unauthorized');
    expect(s.tokenRequests).toHaveLength(2);
    expect(s.transfersRequests).toHaveLength(2);
  });

  it('reports wrong credentials as unauthorized without logging the password', async () => {
    const s = await fake({ password: 'the-real-one' });
    const log = capturingLogger();
    const { c } = client(s.baseUrl, { logger: log.logger });
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('unauthorized');
    expect(s.tokenRequests).toHaveLength(1);
    expect(log.text()).not.toContain('s3cret-pass');
    expect(err.message).not.toContain('s3cret-pass');
  });

  it('rejects a token response without access_token as invalid_response', async () => {
    const s = await fake({ intercept: ({ request, res }) => (request.kind === 'token' ? json(res, 200, { token_type: 'Bearer' }) : false) });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query()))).reason).toBe('invalid_response');
  });
});

describe('TransferHistoryClient concurrency and cancellation', () => {
  it('shares one token request between concurrent paginations', async () => {
    const s = await fake({ records: wireRecords(4, '2024-05-01T10:00:00Z') });
    const { c } = client(s.baseUrl);
    const [a, b] = await Promise.all([collect(c, query({ limit: 2 })), collect(c, query({ limit: 3 }))]);
    expect(a.transfers).toHaveLength(4);
    expect(b.transfers).toHaveLength(4);
    expect(s.tokenRequests).toHaveLength(1);
  });

  it('re-authenticates once when concurrent paginations find the token revoked', async () => {
    const s = await fake({ records: wireRecords(4, '2024-05-01T10:00:00Z') });
    const { c } = client(s.baseUrl);
    await collect(c, query());
    s.revokeTokens();
    const [a, b] = await Promise.all([collect(c, query({ limit: 2 })), collect(c, query({ limit: 3 }))]);
    expect(a.transfers).toHaveLength(4);
    expect(b.transfers).toHaveLength(4);
    expect(s.tokenRequests).toHaveLength(2);
  });

  it('ends with the abort, not a SourceError, when the caller aborts', async () => {
    const s = await fake({ records: wireRecords(4, '2024-05-01T10:00:00Z') });
    const { c } = client(s.baseUrl);
    const controller = new AbortController();
    const pages = c.pages(query({ limit: 2 }), controller.signal);
    const first = await pages.next();
    expect(first.done).toBe(false);
    controller.abort();
    const err = await pages.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(SourceError);
    expect(s.transfersRequests).toHaveLength(1);
  });
});

describe('TransferHistoryClient retries', () => {
  it('recovers from a 5xx storm within the retry budget', async () => {
    const s = await fake({
      records: wireRecords(2, '2024-05-01T10:00:00Z'),
      intercept: ({ request, res, transfersSeen }) => (request.kind === 'transfers' && transfersSeen < 2 ? json(res, 502, {}) : false),
    });
    const statuses: string[] = [];
    const { c, retryDelays } = client(s.baseUrl, { hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    const got = await collect(c, query());
    expect(got.transfers).toHaveLength(2);
    expect(statuses).toEqual(['token:200', 'transfers:502', 'transfers:502', 'transfers:200']);
    expect(retryDelays.map(([a]) => a)).toEqual([1, 2]);
  });

  it('throws server_error once the retries are exhausted', async () => {
    const s = await fake({ intercept: ({ request, res }) => (request.kind === 'transfers' ? json(res, 503, { error: 'down' }) : false) });
    const { c } = client(s.baseUrl, { retries: 3 });
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('server_error');
    expect(err.statusCode).toBe(503);
    expect(s.transfersRequests).toHaveLength(3);
  });

  it('passes Retry-After to the delay function', async () => {
    const s = await fake({
      intercept: ({ request, res, transfersSeen }) =>
        request.kind === 'transfers' && transfersSeen === 0 ? json(res, 503, {}, { 'retry-after': '2' }) : false,
    });
    const { c, retryDelays } = client(s.baseUrl);
    await collect(c, query());
    expect(retryDelays).toEqual([[1, 2000]]);
  });

  it('does not retry a 400 and logs its body, truncated', async () => {
    const s = await fake({
      intercept: ({ request, res }) => (request.kind === 'transfers' ? json(res, 400, { error: `bad start ${'x'.repeat(2000)}` }) : false),
    });
    const log = capturingLogger();
    const { c, retryDelays } = client(s.baseUrl, { logger: log.logger });
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('bad_request');
    expect(s.transfersRequests).toHaveLength(1);
    expect(retryDelays).toEqual([]);
    const line = log.lines().find((l) => l.msg === 'the service refused the transfers query');
    expect(String(line?.body)).toContain('bad start');
    expect(String(line?.body).length).toBeLessThan(600);
  });

  it('retries a timed-out request', async () => {
    const s = await fake({
      records: wireRecords(1, '2024-05-01T10:00:00Z'),
      // Never answers the first transfers request; close() ends the connection.
      intercept: ({ request, transfersSeen }) => request.kind === 'transfers' && transfersSeen === 0,
    });
    const statuses: string[] = [];
    const { c } = client(s.baseUrl, { timeout: 600, hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    const got = await collect(c, query());
    expect(got.transfers).toHaveLength(1);
    expect(statuses).toEqual(['token:200', 'transfers:timeout', 'transfers:200']);
  });

  it('throws timeout after timing out on every attempt', async () => {
    const s = await fake({ intercept: ({ request }) => request.kind === 'transfers' });
    const { c } = client(s.baseUrl, { timeout: 500, retries: 2 });
    expect((await failure(collect(c, query()))).reason).toBe('timeout');
    expect(s.transfersRequests).toHaveLength(2);
  });

  it('retries dropped connections and reports network after the retries', async () => {
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        res.socket?.destroy();
        return true;
      },
    });
    const statuses: string[] = [];
    const { c } = client(s.baseUrl, { retries: 2, hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    expect((await failure(collect(c, query()))).reason).toBe('network');
    expect(s.transfersRequests).toHaveLength(2);
    expect(statuses).toEqual(['token:200', 'transfers:network', 'transfers:network']);
  });

  it('retries a malformed 2xx body like a 5xx and reports invalid_response after the retries', async () => {
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>login</html>');
        return true;
      },
    });
    const statuses: string[] = [];
    const { c } = client(s.baseUrl, { hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    expect((await failure(collect(c, query()))).reason).toBe('invalid_response');
    expect(s.transfersRequests).toHaveLength(3);
    expect(statuses).toEqual(['token:200', 'transfers:200', 'transfers:200', 'transfers:200']);
  });

  it('recovers from one truncated body', async () => {
    const s = await fake({
      records: wireRecords(2, '2024-05-01T10:00:00Z'),
      intercept: ({ request, res, transfersSeen }) => {
        if (request.kind !== 'transfers' || transfersSeen > 0) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"data": [{"DATAHORA": "2024-');
        return true;
      },
    });
    const { c } = client(s.baseUrl);
    expect((await collect(c, query())).transfers).toHaveLength(2);
    expect(s.transfersRequests).toHaveLength(2);
  });

  it('reports an empty 200 body as invalid_response', async () => {
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        res.writeHead(200);
        res.end();
        return true;
      },
    });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query()))).reason).toBe('invalid_response');
  });

  it.each([[[]], [{ next: '' }], [{ data: {}, next: '' }], [{ data: [], next: 5 }]])('rejects the envelope %j', async (body) => {
    const s = await fake({ intercept: ({ request, res }) => (request.kind === 'transfers' ? json(res, 200, body) : false) });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query()))).reason).toBe('invalid_response');
  });

  it('bounds an attempt as a whole: a body dripped a byte at a time times out, however steady the drip', async () => {
    const s = await fake({
      records: wireRecords(1, '2024-05-01T10:00:00Z'),
      intercept: ({ request, res, transfersSeen }) => {
        if (request.kind !== 'transfers' || transfersSeen > 0) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        // A byte every 50 ms: no phase of the answer is ever silent for long, the whole of it never ends.
        const timer = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(timer));
        return true;
      },
    });
    const statuses: string[] = [];
    const { c } = client(s.baseUrl, { timeout: 400, hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    expect((await collect(c, query())).transfers).toHaveLength(1);
    expect(statuses).toEqual(['token:200', 'transfers:timeout', 'transfers:200']);
  });

  it('gives up at once on a Retry-After longer than a minute, and waits as asked for a shorter one', async () => {
    const s = await fake({
      intercept: ({ request, res, transfersSeen }) => {
        if (request.kind !== 'transfers') return false;
        return json(res, 429, {}, { 'retry-after': transfersSeen === 0 ? '30' : '3600' });
      },
    });
    const { c, retryDelays } = client(s.baseUrl);
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('server_error');
    expect(err.statusCode).toBe(429);
    expect(retryDelays).toEqual([[1, 30_000]]);
    expect(s.transfersRequests).toHaveLength(2);
  });

  it('ends with the abort while it waits to retry', async () => {
    const s = await fake({ intercept: ({ request, res }) => (request.kind === 'transfers' ? json(res, 503, {}) : false) });
    const c = new TransferHistoryClient({ source: sourceConfig(s.baseUrl, { retries: 3 }), logger: silentLogger(), retryDelay: () => 60_000 });
    const controller = new AbortController();
    const pending = collect(c, query(), controller.signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    await vi.waitFor(() => expect(s.transfersRequests).toHaveLength(1));
    controller.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(SourceError);
    expect(s.transfersRequests).toHaveLength(1);
  });

  it('leaves no listener on the caller\'s signal after a pagination of many pages', async () => {
    const s = await fake({ records: wireRecords(40, '2024-05-01T10:00:00Z') });
    const { c } = client(s.baseUrl);
    const controller = new AbortController();
    expect((await collect(c, query({ limit: 2 }), controller.signal)).pages).toHaveLength(20);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('reports a refused connection as network', async () => {
    const s = await fake();
    const url = s.baseUrl;
    await s.close();
    const { c } = client(url, { retries: 1 });
    expect((await failure(collect(c, query()))).reason).toBe('network');
  });
});

describe('TransferHistoryClient bounds (a hostile or broken service)', () => {
  it('cuts off a page larger than max_response_bytes while it streams in (chunked, no Content-Length): response_too_large, not retried', async () => {
    let bytesSent = 0;
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data":[');
        const chunk = `${JSON.stringify(wireRecord())},`.repeat(200);
        // 64 MB if read whole; the client must hang up long before.
        const timer = setInterval(() => {
          if (res.destroyed || bytesSent > 64 * 1024 * 1024) {
            clearInterval(timer);
            res.destroy();
            return;
          }
          bytesSent += chunk.length;
          res.write(chunk);
        }, 1);
        res.on('close', () => clearInterval(timer));
        return true;
      },
    });
    const statuses: string[] = [];
    const c = new TransferHistoryClient({
      source: sourceConfig(s.baseUrl, { max_response_bytes: 1024 * 1024 }),
      logger: silentLogger(),
      hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) },
      retryDelay: () => 0,
    });
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('response_too_large');
    expect(err.message).toMatch(/larger than 1048576 bytes/);
    expect(bytesSent).toBeLessThan(8 * 1024 * 1024);
    expect(s.transfersRequests).toHaveLength(1);
    expect(statuses).toContain('transfers:too_large');
  });

  it('refuses a declared Content-Length over the cap before reading the body, and a token answer over 64 KB', async () => {
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind === 'token') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ access_token: 'x'.repeat(200_000), token_type: 'bearer' }));
          return true;
        }
        return false;
      },
    });
    const { c } = client(s.baseUrl);
    expect((await failure(collect(c, query()))).reason).toBe('response_too_large');
    expect(s.transfersRequests).toHaveLength(0);
  });

  it('asks for gzip and reads a compressed page; a compressed answer that inflates past max_response_bytes is cut off', async () => {
    const asked: string[] = [];
    let bomb = false;
    const s = await fake({
      records: wireRecords(3, '2024-05-01T10:00:00Z'),
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        asked.push(String(res.req.headers['accept-encoding']));
        // 4 MB of JSON that gzips to a few KB (a "zip bomb" against a 1 MB cap), or the page itself gzipped.
        const body = bomb ? `{"data":[],"next":"","pad":"${' '.repeat(4 * 1024 * 1024)}"}` : JSON.stringify({ data: wireRecords(3, '2024-05-01T10:00:00Z'), next: '' });
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(body));
        return true;
      },
    });
    const c = new TransferHistoryClient({ source: sourceConfig(s.baseUrl, { max_response_bytes: 1024 * 1024 }), logger: silentLogger(), retryDelay: () => 0 });
    expect((await collect(c, query())).transfers.map((t) => t.file)).toEqual(['/in/FILE_0.RET', '/in/FILE_1.RET', '/in/FILE_2.RET']);
    expect(asked[0]).toContain('gzip');
    bomb = true;
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('response_too_large');
    expect(s.transfersRequests).toHaveLength(2);
  });

  it('retries a body that does not decompress like a garbled one, and reads brotli and gzip-then-deflate', async () => {
    const page = JSON.stringify({ data: wireRecords(2, '2024-05-01T10:00:00Z'), next: '' });
    const answers: Array<[string, Buffer]> = [
      ['gzip', Buffer.from('not gzip at all')],
      ['br', brotliCompressSync(page)],
      ['gzip, deflate', deflateSync(gzipSync(page))],
      ['zstd', Buffer.from(page)],
    ];
    const s = await fake({
      intercept: ({ request, res, transfersSeen }) => {
        if (request.kind !== 'transfers') return false;
        const [encoding, body] = answers[Math.min(transfersSeen, answers.length - 1)] as [string, Buffer];
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        res.end(body);
        return true;
      },
    });
    const statuses: string[] = [];
    const { c } = client(s.baseUrl, { retries: 2, hooks: { onRequest: (e, st) => statuses.push(`${e}:${st}`) } });
    expect((await collect(c, query())).transfers).toHaveLength(2);
    expect((await collect(c, query())).transfers).toHaveLength(2);
    // A coding it did not ask for (zstd) is unreadable: retried, then invalid_response.
    const err = await failure(collect(c, query()));
    expect(err.reason).toBe('invalid_response');
    expect(err.message).toMatch(/zstd was not asked for/);
    expect(statuses).toEqual(['token:200', 'transfers:200', 'transfers:200', 'transfers:200', 'transfers:200', 'transfers:200']);
  });

  it('decompresses a compressed error body for its log excerpt', async () => {
    const s = await fake({
      intercept: ({ request, res }) => {
        if (request.kind !== 'transfers') return false;
        res.writeHead(400, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ error: 'bad start: not a number' })));
        return true;
      },
    });
    const log = capturingLogger();
    const { c } = client(s.baseUrl, { logger: log.logger });
    expect((await failure(collect(c, query()))).reason).toBe('bad_request');
    const line = log.lines().find((l) => l.msg === 'the service refused the transfers query');
    expect(String(line?.body)).toContain('bad start: not a number');
  });

  it('refuses a page of far more records than the limit asked for', async () => {
    const s = await fake({
      intercept: ({ request, res }) => (request.kind === 'transfers' ? json(res, 200, { data: wireRecords(25, '2024-05-01T10:00:00Z'), next: '' }) : false),
    });
    const { c } = client(s.baseUrl);
    const err = await failure(collect(c, query({ limit: 10 })));
    expect(err.reason).toBe('response_too_large');
    expect(err.message).toMatch(/a page of 25 records, asked for at most 10/);
  });

  it('counts a record with a 1 MB file name invalid (with the reason) and cuts a 1 MB message to 2048 characters', async () => {
    const records = [
      wireRecord({ NOMEARQUIVO: `/in/${'A'.repeat(1_000_000)}.RET` }),
      wireRecord({ NOMEARQUIVO: '/in/ok.RET', MENSAGEM: 'E'.repeat(1_000_000), RESULTADO: 12 }),
      wireRecord({ NOMEARQUIVO: '/in/ok2.RET', USUARIO: 'U'.repeat(300) }),
    ];
    const s = await fake({ records });
    const reasons: string[] = [];
    const { c } = client(s.baseUrl, { hooks: { onInvalidRecord: (r) => reasons.push(r) } });
    const got = await collect(c, query());
    expect(reasons).toEqual(['NOMEARQUIVO longer than 4096 characters (1000008)', 'USUARIO longer than 256 characters (300)']);
    expect(got.transfers).toHaveLength(1);
    const message = got.transfers[0]?.message ?? '';
    expect(message.length).toBeLessThan(2_100);
    expect(message).toMatch(/^E{2048}… \(truncated from 1000000 characters\)$/);
    // The same record read again has the same identity (the cut is deterministic).
    const again = await collect(c, query());
    expect(again.transfers[0]?.id).toBe(got.transfers[0]?.id);
  });
});
