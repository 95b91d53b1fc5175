import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/start-simulator.js';
import { getAll, getPage, getToken, reportUrl } from './sim-client.js';

const NOW = Date.UTC(2026, 10, 23, 15, 0, 0); // Monday 12:00 America/Sao_Paulo
const MIN = 60_000;
const HOUR = 60 * MIN;

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({ clock: new ManualClock(NOW), historyStart: NOW - 2 * 86_400_000, ...options });
  running.push(sim);
  return sim;
}

async function tokenRequest(url: string, body: string, contentType = 'application/x-www-form-urlencoded'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, body: await res.json() };
}

describe('POST /oauth/token', () => {
  it('answers a password grant with every field of the token response', async () => {
    const sim = await start({ username: 'op1', password: 's3cret!' });
    const { status, body } = await tokenRequest(sim.url, 'grant_type=password&username=op1&password=s3cret%21');
    expect(status).toBe(200);
    expect(body).toMatchObject({ operator: 'op1', token_type: 'Bearer', rest_name: expect.any(String), access_token: expect.any(String) });
    const scope: unknown = JSON.parse((body as { scope: string }).scope);
    expect(scope).toBeTypeOf('object');
    for (const permissions of Object.values(scope as Record<string, unknown>)) {
      for (const value of Object.values(permissions as Record<string, unknown>)) expect(Number.isInteger(value)).toBe(true);
    }
    expect(JSON.stringify(body)).not.toContain('s3cret');
    expect(sim.stats().tokenRequests).toBe(1);
  });

  it('answers 400 for a bad grant or a missing field, 401 for bad credentials', async () => {
    const sim = await start();
    expect((await tokenRequest(sim.url, 'grant_type=client_credentials&username=demo&password=demo')).status).toBe(400);
    expect((await tokenRequest(sim.url, 'username=demo&password=demo')).status).toBe(400);
    expect((await tokenRequest(sim.url, 'grant_type=password&password=demo')).status).toBe(400);
    expect((await tokenRequest(sim.url, 'grant_type=password&username=demo')).status).toBe(400);
    expect((await tokenRequest(sim.url, '{"grant_type":"password","username":"demo","password":"demo"}', 'application/json')).status).toBe(400);
    expect((await tokenRequest(sim.url, 'grant_type=password&username=demo&password=wrong')).status).toBe(401);
    expect((await tokenRequest(sim.url, 'grant_type=password&username=other&password=demo')).status).toBe(401);
    expect((await fetch(`${sim.url}/oauth/token`)).status).toBe(405);
  });
});

describe('GET /reports/v2/transfers', () => {
  it('answers 401 without a token or with an unknown one', async () => {
    const sim = await start();
    const url = reportUrl(sim.url, { start: NOW - HOUR, end: NOW });
    expect((await fetch(url)).status).toBe(401);
    expect((await getPage(url, 'not-a-token')).status).toBe(401);
    expect((await getPage(url, await getToken(sim.url))).status).toBe(200);
  });

  it.each([
    ['non-integer start', { start: 'yesterday', end: NOW }],
    ['fractional end', { start: 0, end: '1.5' }],
    ['non-integer limit', { limit: 'ten' }],
    ['non-integer index', { index: '2x' }],
    ['negative index', { index: -1 }],
    ['limit above 1000', { limit: 1001 }],
    ['limit below 1', { limit: 0 }],
    ['results not 0/-1', { results: 1 }],
    ['events not 5/7', { events: 6 }],
    ['one bad event among good ones', { events: [5, 'x'] }],
    ['start after end', { start: NOW, end: NOW - 1 }],
  ])('answers 400 for %s', async (_name, params) => {
    const sim = await start();
    const token = await getToken(sim.url);
    const res = await fetch(reportUrl(sim.url, params), { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ message: expect.any(String) });
  });

  it('pages through a range exactly, with no duplicates and no gaps, for limits 1, 7 and 1000', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    const range = { start: NOW - 4 * MIN, end: NOW - MIN };
    const base = await getAll(sim.url, { ...range, limit: 1000 }, token);
    expect(base.pages).toBe(1);
    expect(base.records.length).toBeGreaterThan(30);
    for (const limit of [1, 7]) {
      const paged = await getAll(sim.url, { ...range, limit }, token);
      expect(paged.records).toEqual(base.records);
      expect(paged.pages).toBe(Math.ceil(base.records.length / limit));
    }
    const keys = base.records.map((r) => JSON.stringify(r));
    expect(new Set(keys).size).toBe(keys.length);
    const times = base.records.map((r) => Date.parse(String(r['DATAHORA'])));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(Math.min(...times)).toBeGreaterThanOrEqual(range.start);
    expect(Math.max(...times)).toBeLessThanOrEqual(range.end);
    // Adjacent ranges share nothing and together make the union (start and end are inclusive).
    const left = await getAll(sim.url, { start: range.start, end: range.start + 90_000 - 1, limit: 7 }, token);
    const right = await getAll(sim.url, { start: range.start + 90_000, end: range.end, limit: 7 }, token);
    expect([...left.records, ...right.records]).toEqual(base.records);
  });

  it('pages through more than 1000 records with next links of the same path that repeat the filters', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    const params = { start: NOW - 2 * HOUR, end: NOW, events: [5, 7], limit: 1000, results: 0, instance: 'PROD01' };
    const first = await getPage(reportUrl(sim.url, params), token);
    expect(first.data).toHaveLength(1000);
    expect(first.next.startsWith('/reports/v2/transfers?')).toBe(true);
    const next = new URL(first.next, sim.url).searchParams;
    expect(next.get('start')).toBe(String(params.start));
    expect(next.get('end')).toBe(String(params.end));
    expect(next.getAll('events')).toEqual(['5', '7']);
    expect(next.get('limit')).toBe('1000');
    expect(next.get('results')).toBe('0');
    expect(next.get('instance')).toBe('PROD01');
    expect(next.get('index')).toBe('1000');
    const all = await getAll(sim.url, params, token);
    expect(all.pages).toBeGreaterThan(1);
    expect(all.records.every((r) => r['INSTANCE'] === 'PROD01' && r['RESULTADO'] === 0)).toBe(true);
    expect(sim.stats().recordsServed).toBe(1000 + all.records.length);
  });

  it('returns the same history after a restart with the same seed, another with another seed', async () => {
    const range = { start: NOW - 30 * MIN, end: NOW, limit: 1000 };
    const a = await start({ seed: 7 });
    const first = await getAll(a.url, range, await getToken(a.url));
    await a.close();
    const b = await start({ seed: 7, historyStart: NOW - 86_400_000 });
    expect((await getAll(b.url, range, await getToken(b.url))).records).toEqual(first.records);
    const c = await start({ seed: 8 });
    expect((await getAll(c.url, range, await getToken(c.url))).records).not.toEqual(first.records);
  });

  it('lets records arrive as the clock passes them, and counts DIAS from the clock', async () => {
    const clock = new ManualClock(NOW);
    const sim = await start({ clock });
    const token = await getToken(sim.url);
    const range = { start: NOW - 5 * MIN, end: NOW + 5 * MIN, limit: 1000 };
    const before = await getAll(sim.url, range, token);
    expect(before.records.every((r) => Date.parse(String(r['DATAHORA'])) <= NOW)).toBe(true);
    clock.advance(5 * MIN);
    const after = await getAll(sim.url, range, token);
    expect(after.records.length).toBeGreaterThan(before.records.length + 30);
    expect(after.records.slice(0, before.records.length)).toEqual(before.records);
    expect(after.records.every((r) => r['DIAS'] === 0)).toBe(true);
    clock.advance(3 * 86_400_000);
    const later = await getAll(sim.url, range, token);
    expect(later.records.map((r) => r['DIAS'])).toEqual(after.records.map(() => 3));
    expect(later.records.map((r) => ({ ...r, DIAS: 0 }))).toEqual(after.records);
  });

  it('filters by events, results, instance, user, filename and tags', async () => {
    const sim = await start({ scenario: 'burst' });
    const token = await getToken(sim.url);
    const range = { start: NOW - HOUR, end: NOW, limit: 1000 };
    const all = (await getAll(sim.url, range, token)).records;
    const check = async (params: Record<string, string | number | (string | number)[]>, keep: (r: Record<string, unknown>) => boolean): Promise<void> => {
      const got = (await getAll(sim.url, { ...range, ...params }, token)).records;
      expect(got.length).toBeGreaterThan(0);
      expect(got).toEqual(all.filter(keep));
    };
    await check({ events: 5 }, (r) => r['EVENTO'] === 5);
    await check({ events: [7, 5] }, () => true);
    await check({ results: 0 }, (r) => r['RESULTADO'] === 0);
    await check({ results: -1 }, (r) => r['RESULTADO'] !== 0);
    await check({ instance: 'HOM01' }, (r) => r['INSTANCE'] === 'HOM01');
    await check({ user: 'BANK2', events: 7 }, (r) => r['USUARIO'] === 'BANK2' && r['EVENTO'] === 7);
    await check({ filename: '.edi' }, (r) => String(r['NOMEARQUIVO']).includes('.edi'));
    await check({ tags: 'RETORNO' }, (r) => String(r['TAGS']).split(',').includes('RETORNO'));
  });

  it('answers data: null and next: "" when nothing matches', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    const queries: Record<string, string | number>[] = [
      { start: NOW - 10 * 86_400_000, end: NOW - 9 * 86_400_000 },
      { start: NOW - HOUR, end: NOW, user: 'NOBODY' },
      { start: NOW - HOUR, end: NOW, index: 1_000_000 },
    ];
    for (const params of queries) {
      const res = await fetch(reportUrl(sim.url, params), { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ data: null, next: '' });
    }
  });

  it('serves injected records exactly, merged in time order, with generate: false serving only them', async () => {
    const sim = await start({ generate: false });
    const token = await getToken(sim.url);
    const hostile = '/in/BANK1/<!channel> & <script>alert(1)</script>\r\nX-Injected: yes.RET';
    sim.inject([
      { DATAHORA: new Date(NOW - 2 * MIN).toISOString(), USUARIO: 'BANK9', RESULTADO: 36, NOMEARQUIVO: hostile, MENSAGEM: 'Authentication failed for user BANK9' },
      { DATAHORA: '2026-11-23T14:55:00.123', INSTANCE: 'PROD02' },
      { DATAHORA: new Date(NOW + MIN).toISOString(), NOMEARQUIVO: '/in/BANK1/FUTURE.RET' },
    ]);
    const { records } = await getAll(sim.url, { start: NOW - HOUR, end: NOW + HOUR, limit: 1 }, token);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ DATAHORA: '2026-11-23T14:55:00.123Z', INSTANCE: 'PROD02', RESULTADO: 0, DIAS: 0 });
    expect(records[1]).toMatchObject({ DATAHORA: '2026-11-23T14:58:00.000Z', USUARIO: 'BANK9', RESULTADO: 36, NOMEARQUIVO: hostile });
    expect(Object.keys(records[1] ?? {}).sort()).toEqual(
      ['CONEXAO', 'DATAARQUIVO', 'DATAHORA', 'DIAS', 'EVENTO', 'HORAARQUIVO', 'INSTANCE', 'MAXTAMREG', 'MENSAGEM', 'NOMEARQUIVO', 'NUMREG', 'PROCID', 'REDE', 'RESULTADO', 'TAGS', 'TAMARQUIVO', 'THREADID', 'TIPOREC', 'USUARIO'],
    );
    const byName = await getAll(sim.url, { start: NOW - HOUR, end: NOW, filename: '<!channel>' }, token);
    expect(byName.records).toHaveLength(1);
    expect(() => sim.inject([{ RESULTADO: 'x' as unknown as number }])).toThrow(expect.objectContaining({ code: 'SIM_BAD_RECORD' }));
  });

  it('keeps a base path in its own URL but not in next, as gateways do', async () => {
    const sim = await start({ basePath: '/api/' });
    expect(sim.url).toMatch(/\/api$/);
    const token = await getToken(sim.url);
    const page = await getPage(reportUrl(sim.url, { start: NOW - HOUR, end: NOW, limit: 5 }), token);
    expect(page.data).toHaveLength(5);
    expect(page.next.startsWith('/reports/v2/transfers?')).toBe(true);
    expect((await fetch(new URL(page.next, sim.url), { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
  });
});
