import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/start-simulator.js';
import { getAll, getPage, getToken, reportUrl } from './sim-client.js';

const NOW = Date.UTC(2026, 10, 23, 15, 0, 0);
const HOUR = 3_600_000;
const RANGE = { start: NOW - HOUR, end: NOW };

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({ clock: new ManualClock(NOW), historyStart: NOW - 86_400_000, ...options });
  running.push(sim);
  return sim;
}

async function status(url: string, token: string): Promise<number> {
  return (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status;
}

describe('faults', () => {
  it('down: every request answers 503 until lifted', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    sim.setFaults({ down: true });
    expect((await fetch(`${sim.url}/oauth/token`, { method: 'POST' })).status).toBe(503);
    expect(await status(reportUrl(sim.url, RANGE), token)).toBe(503);
    sim.setFaults({ down: false });
    expect(await status(reportUrl(sim.url, RANGE), token)).toBe(200);
  });

  it('revokeTokens revokes the tokens issued so far; a fresh token works', async () => {
    const sim = await start();
    const old = await getToken(sim.url);
    sim.setFaults({ revokeTokens: true });
    expect(await status(reportUrl(sim.url, RANGE), old)).toBe(401);
    expect(await status(reportUrl(sim.url, RANGE), await getToken(sim.url))).toBe(200);
  });

  it('rejectTokens makes every report request 401, fresh token or not', async () => {
    const sim = await start();
    sim.setFaults({ rejectTokens: true });
    expect(await status(reportUrl(sim.url, RANGE), await getToken(sim.url))).toBe(401);
  });

  it('tokenRevokeEvery revokes on every Nth report request', async () => {
    const sim = await start();
    sim.setFaults({ tokenRevokeEvery: 3 });
    const token = await getToken(sim.url);
    const url = reportUrl(sim.url, RANGE);
    expect([await status(url, token), await status(url, token), await status(url, token)]).toEqual([200, 200, 401]);
  });

  it('status500Rate and malformedRate spoil answers; the same seed spoils the same requests', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    sim.setFaults({ status500Rate: 1 });
    expect(await status(reportUrl(sim.url, RANGE), token)).toBe(500);
    sim.setFaults({ status500Rate: 0, malformedRate: 1 });
    const res = await fetch(reportUrl(sim.url, RANGE), { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(() => JSON.parse(text) as unknown).toThrow();

    const sequence = async (seed: number): Promise<number[]> => {
      const s = await start({ seed });
      s.setFaults({ status500Rate: 0.5 });
      const t = await getToken(s.url);
      const out: number[] = [];
      for (let i = 0; i < 16; i++) out.push(await status(reportUrl(s.url, RANGE), t));
      return out;
    };
    const first = await sequence(11);
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await sequence(11)).toEqual(first);
  });

  it('delayMs holds answers back; close() ends them without waiting', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    sim.setFaults({ delayMs: 600_000 });
    let settled = false;
    const pending = fetch(reportUrl(sim.url, RANGE), { headers: { authorization: `Bearer ${token}` } }).then(
      () => 'answered',
      () => 'failed',
    );
    void pending.then(() => (settled = true));
    while (sim.stats().reportRequests === 0) await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    await sim.close();
    expect(await pending).toBe('failed');
  });

  it('next quirks (nextQuirkRate) still lead through the same records when the client restores its filters', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    const params = { ...RANGE, events: 7, results: 0, user: 'BANK1', limit: 3 };
    const clean = await getAll(sim.url, params, token);
    sim.setFaults({ nextQuirkRate: 1 });
    const seen = new Set<string>();
    const records: Record<string, unknown>[] = [];
    let url = reportUrl(sim.url, params);
    for (;;) {
      const page = await getPage(url, token);
      records.push(...(page.data ?? []));
      if (page.next === '') break;
      const resolved = new URL(page.next, url);
      if (/^https?:/.test(page.next)) seen.add('absolute');
      else if (!page.next.startsWith('/')) seen.add('path-relative');
      if (resolved.searchParams.get('user') === null) seen.add('drop-filters');
      if (resolved.searchParams.getAll('events').join() === '') seen.add('empty-events');
      expect(resolved.origin).toBe(new URL(sim.url).origin);
      expect(resolved.pathname).toBe('/reports/v2/transfers');
      // What the contract asks of the client: put back the filters a next leaves out or empty.
      resolved.searchParams.set('user', 'BANK1');
      resolved.searchParams.set('results', '0');
      resolved.searchParams.delete('events');
      resolved.searchParams.append('events', '7');
      url = resolved.toString();
    }
    expect(records).toEqual(clean.records);
    expect(seen).toEqual(new Set(['absolute', 'path-relative', 'drop-filters', 'empty-events']));
  });

  it('record quirks: numeric strings and zone-less DATAHORA', async () => {
    const sim = await start();
    const token = await getToken(sim.url);
    const clean = (await getAll(sim.url, { ...RANGE, limit: 1000 }, token)).records;
    sim.setFaults({ recordQuirkRate: 1 });
    const quirky = (await getAll(sim.url, { ...RANGE, limit: 1000 }, token)).records;
    expect(quirky.some((r) => typeof r['RESULTADO'] === 'string' && r['RESULTADO'] === String(clean[quirky.indexOf(r)]?.['RESULTADO']))).toBe(true);
    expect(quirky.some((r) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/.test(String(r['DATAHORA'])))).toBe(true);
    // Same transfers, only spelled differently.
    expect(quirky.map((r) => Date.parse(`${String(r['DATAHORA']).replace(/Z$/, '')}Z`))).toEqual(clean.map((r) => Date.parse(String(r['DATAHORA']))));
  });

  it('the faults scenario misbehaves from the start', async () => {
    const sim = await start({ scenario: 'faults' });
    // Its slow answers (35 s) are tested above with delayMs; keep this test fast.
    sim.setFaults({ delayMs: 0 });
    const token = await getToken(sim.url);
    const statuses: number[] = [];
    let quirky = 0;
    for (let i = 0; i < 60; i++) {
      const res = await fetch(reportUrl(sim.url, { ...RANGE, limit: 50 }), { headers: { authorization: `Bearer ${token}` } });
      statuses.push(res.status);
      if (res.status === 200) {
        const text = await res.text();
        if (/"RESULTADO":"\d+"/.test(text) || /"DATAHORA":"[^"Z]+"/.test(text)) quirky++;
      } else await res.text();
      if (res.status === 401) break;
    }
    // Token revocation every 50 report requests, 500s and quirky records along the way.
    expect(statuses).toContain(401);
    expect(statuses).toContain(500);
    expect(quirky).toBeGreaterThan(0);
  });
});

describe('control API (/_sim/)', () => {
  it('is off unless asked for', async () => {
    const sim = await start();
    expect((await fetch(`${new URL(sim.url).origin}/_sim/stats`)).status).toBe(404);
  });

  it('injects records, sets faults and reports stats over HTTP', async () => {
    const sim = await start({ control: true, generate: false });
    const control = `${new URL(sim.url).origin}/_sim`;
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${control}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const injected = await post('records', [{ DATAHORA: new Date(NOW - 1000).toISOString(), USUARIO: 'ACME_EDI', RESULTADO: 99 }]);
    expect(injected.status).toBe(200);
    expect(await injected.json()).toEqual({ injected: 1 });
    expect((await post('records', [{ RESULTADO: 'bad' }])).status).toBe(400);
    expect((await post('records', { not: 'an array' })).status).toBe(400);
    expect((await post('records', [{ UNKNOWN_FIELD: 1 }])).status).toBe(400);

    const token = await getToken(sim.url);
    const { records } = await getAll(sim.url, RANGE, token);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ USUARIO: 'ACME_EDI', RESULTADO: 99 });

    const faults = await post('faults', { status500Rate: 1 });
    expect(faults.status).toBe(200);
    expect(await faults.json()).toMatchObject({ status500Rate: 1, down: false });
    expect(await status(reportUrl(sim.url, RANGE), token)).toBe(500);
    expect((await post('faults', { status500Rate: 2 })).status).toBe(400);
    expect((await post('faults', { nosuchfault: true })).status).toBe(400);

    const stats = await (await fetch(`${control}/stats`)).json();
    expect(stats).toEqual({ tokenRequests: 1, reportRequests: 2, recordsServed: 1 });
  });
});
