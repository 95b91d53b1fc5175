import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import type { Faults } from '../../src/simulator/faults.js';
import type { ServiceRecord } from '../../src/source/transfer.js';
import { eventually } from '../helpers/daemon-process.js';
import {
  metricSum,
  recordResult,
  sleep,
  startDaemonProcess,
  startWebhook,
  stopDaemon,
  tally,
  tempDir,
  writeYaml,
  type DaemonProcess,
  type Webhook,
} from './harness.js';

/**
 * The daemon (built CLI, real process) polls the simulator while it misbehaves. Each scenario injects failed
 * transfers for a few users (one error_burst alert per user expected), half before the daemon starts and half
 * while it runs, and checks: every alert notified exactly once, nothing else notified, every valid transfer
 * counted exactly once in transfer_watch_records_total.
 */

const THRESHOLD = 3;

interface Plan {
  records: Partial<ServiceRecord>[];
  expectedKeys: string[];
  valid: number;
}

/** `users` users with THRESHOLD failures each, plus `successes` successful transfers, spread over `spanMs` before `end`. */
function plan(tag: string, users: number, successes: number, end: number, spanMs: number, extra: (i: number) => Partial<ServiceRecord> = () => ({})): Plan {
  const records: Partial<ServiceRecord>[] = [];
  const expectedKeys: string[] = [];
  const total = users * THRESHOLD + successes;
  let n = 0;
  const at = (): string => new Date(end - spanMs + Math.floor((n * spanMs) / total)).toISOString();
  for (let u = 0; u < users; u++) {
    const user = `REL${tag}${u}`;
    expectedKeys.push(`firing:RelBurst{user=${user}}`);
    for (let k = 0; k < THRESHOLD; k++) {
      records.push({ DATAHORA: at(), USUARIO: user, EVENTO: 7, RESULTADO: 21, NOMEARQUIVO: `/in/${user}/RET_${n}.RET`, MENSAGEM: 'timeout', ...extra(n) });
      n++;
    }
  }
  for (let s = 0; s < successes; s++) {
    records.push({ DATAHORA: at(), USUARIO: `REL${tag}OK`, EVENTO: 5, RESULTADO: 0, NOMEARQUIVO: `/out/REL${tag}OK/REM_${n}.REM`, ...extra(n) });
    n++;
  }
  return { records, expectedKeys, valid: records.length };
}

interface ScenarioOptions {
  name: string;
  faultsText: string;
  faults: Partial<Faults>;
  source?: Record<string, unknown>;
  poll?: Record<string, unknown>;
  usersPerBatch?: number;
  successesPerBatch?: number;
  extra?: (i: number) => Partial<ServiceRecord>;
  /** Put a proxy between daemon and simulator that rewrites page bodies. */
  rewritePage?: (page: { data: Record<string, unknown>[] | null; next: string }) => void;
  /** Records the proxy breaks (not counted as valid, never alerting). */
  invalid?: Partial<ServiceRecord>[];
  timeoutMs?: number;
  /** Proof the fault was met: a metric (and label filter) that must end above 0. */
  faultSeen?: { metric: string; filter?: string; min?: number };
  /**
   * Proof the fault was met from the daemon's log, for faults it recovers from without a metric moving:
   * a truncated page is retried and, with 3 retries, almost never fails its window (0.3^4 a page).
   */
  faultLogged?: { what: string; match: (line: Record<string, unknown>) => boolean };
}

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** A proxy that passes everything to `target` and lets the test rewrite JSON report pages on the way back. */
async function startRewritingProxy(target: string, rewrite: NonNullable<ScenarioOptions['rewritePage']>): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
          const body = chunks.length ? Buffer.concat(chunks) : undefined;
          const upstream = await fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) });
          let text = await upstream.text();
          if (upstream.status === 200 && (req.url ?? '').startsWith('/reports/')) {
            try {
              const page = JSON.parse(text) as { data: Record<string, unknown>[] | null; next: string };
              rewrite(page);
              text = JSON.stringify(page);
            } catch {
              /* a malformed page passes through as it is */
            }
          }
          res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
          res.end(text);
        } catch {
          res.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function runScenario(o: ScenarioOptions): Promise<void> {
  const tmp = tempDir(o.name.replace(/\W+/g, '-'));
  cleanups.push(() => tmp.cleanup());
  const sim: RunningSimulator = await startSimulator({ generate: false, seed: 11, control: false });
  cleanups.push(() => sim.close());
  let baseUrl = sim.url;
  if (o.rewritePage) {
    const proxy = await startRewritingProxy(sim.url, o.rewritePage);
    cleanups.push(() => proxy.close());
    baseUrl = proxy.url;
  }
  const hook: Webhook = await startWebhook();
  cleanups.push(() => hook.close());

  const tag = o.name.replace(/\W+/g, '').slice(0, 6).toUpperCase();
  const users = o.usersPerBatch ?? 3;
  const successes = o.successesPerBatch ?? 10;
  const before = plan(`${tag}A`, users, successes, Date.now() - 5_000, 60_000, o.extra);
  sim.inject(before.records);
  if (o.invalid) sim.inject(o.invalid);

  const rules = writeYaml(join(tmp.dir, 'rules.yaml'), {
    rules: [
      {
        name: 'RelBurst',
        type: 'error_burst',
        match: { user: [`REL${tag}*`] },
        group_by: ['user'],
        threshold: THRESHOLD,
        window: '1h',
        severity: 'critical',
        annotations: { summary: '{{count}} failed transfers for {{labels.user}}' },
      },
    ],
  });
  const config = writeYaml(join(tmp.dir, 'config.yaml'), {
    sources: [{ name: 'sim', base_url: baseUrl, username: 'demo', password: 'demo', timeout: '2s', retries: 3, ...o.source }],
    poll: { interval: '500ms', success_interval: '1s', delay: '1s', overlap: '2m', page_size: 50, initial_lookback: '10m', stale_after: '5m', ...o.poll },
    state: { dir: join(tmp.dir, 'state') },
    rule_files: [rules],
    receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
    route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '500ms', group_interval: '1s', repeat_interval: '1h' },
    server: { listen: '127.0.0.1:0' },
    log: { level: 'info' },
  });

  sim.setFaults(o.faults);
  let daemon: DaemonProcess | undefined = await startDaemonProcess(config);
  cleanups.push(() => stopDaemon(daemon));

  // The second half arrives while the daemon runs, a little late (inside the poll overlap).
  await sleep(2_000);
  const during = plan(`${tag}B`, users, successes, Date.now() - 1_500, 3_000, o.extra);
  sim.inject(during.records);

  const expectedKeys = [...before.expectedKeys, ...during.expectedKeys];
  const valid = before.valid + during.valid;
  const timeoutMs = o.timeoutMs ?? 45_000;
  const d = daemon;
  let counted = 0;
  try {
    await eventually(async () => {
      counted = await metricSum(d.url, 'transfer_watch_records_total');
      const got = new Set(hook.keys());
      return counted >= valid && expectedKeys.every((k) => got.has(k));
    }, timeoutMs, 250);
  } catch {
    /* the tally below says what is missing */
  }
  // A quiet period in which a duplicate or a false alert would show up.
  await sleep(3_000);
  counted = await metricSum(d.url, 'transfer_watch_records_total');
  const invalidCounted = await metricSum(d.url, 'transfer_watch_records_invalid_total');
  const faultCount = o.faultSeen ? await metricSum(d.url, o.faultSeen.metric, o.faultSeen.filter) : 0;
  const faultLines = o.faultLogged ? d.logs.filter(o.faultLogged.match).length : 0;
  const result = tally(expectedKeys, hook.keys());
  const note = [
    counted !== valid ? `records_total ${counted} != ${valid}` : '',
    o.faultSeen && faultCount < (o.faultSeen.min ?? 1) ? `fault never met (${o.faultSeen.metric} ${faultCount})` : '',
    o.faultLogged && faultLines === 0 ? `fault never met (no log line: ${o.faultLogged.what})` : '',
    o.invalid && invalidCounted < o.invalid.length ? `records_invalid_total ${invalidCounted} < ${o.invalid.length}` : '',
    result.details,
  ]
    .filter(Boolean)
    .join('; ');
  recordResult({ scenario: `source: ${o.name}`, faults: o.faultsText, ...result, ...(note ? { note } : {}) });
  await stopDaemon(daemon, 'SIGTERM');
  daemon = undefined;

  expect(result.details, 'notifications').toBe('');
  expect(result.delivered).toBe(expectedKeys.length);
  expect(counted, 'each valid transfer counted once').toBe(valid);
  if (o.faultSeen) expect(faultCount, `the fault was met (${o.faultSeen.metric})`).toBeGreaterThanOrEqual(o.faultSeen.min ?? 1);
  if (o.faultLogged) expect(faultLines, `the fault was met (${o.faultLogged.what})`).toBeGreaterThanOrEqual(1);
  if (o.invalid) expect(invalidCounted, 'invalid records counted').toBeGreaterThanOrEqual(o.invalid.length);
}

describe('reliability: the monitored service misbehaves', () => {
  it('5xx storm', async () => {
    await runScenario({ name: '5xx storm', faultsText: '60% of report requests answer 500', faults: { status500Rate: 0.6 }, faultSeen: { metric: 'transfer_watch_api_requests_total', filter: 'status_code="500"' }, poll: { page_size: 10 } });
  });

  it('answers slower than the timeout', async () => {
    await runScenario({
      name: 'slow answers',
      faultsText: '40% of report requests delayed 3 s (timeout 1 s, no retries: windows abandoned)',
      faults: { delayMs: 3_000, delayRate: 0.4 },
      source: { timeout: '1s', retries: 0 },
      faultSeen: { metric: 'transfer_watch_poll_errors_total' },
      poll: { page_size: 20 },
    });
  });

  it('token revocation in mid-pagination', async () => {
    await runScenario({
      name: 'token revocation',
      faultsText: 'every token revoked after each 3 report requests; pages of 2',
      faults: { tokenRevokeEvery: 3 },
      faultSeen: { metric: 'transfer_watch_api_requests_total', filter: 'status_code="401"' },
      poll: { page_size: 2 },
    });
  });

  it('malformed JSON and quirky next links', async () => {
    await runScenario({
      name: 'malformed JSON',
      faultsText: '30% truncated JSON bodies, 50% quirky next links, 50% quirky records; pages of 5',
      faults: { malformedRate: 0.3, nextQuirkRate: 0.5, recordQuirkRate: 0.5 },
      faultLogged: { what: 'a request retried for an invalid body', match: (l) => l['reason'] === 'invalid body' },
      poll: { page_size: 5 },
    });
  });

  it('invalid records', async () => {
    const now = Date.now();
    // Failures of a user that must never alert: every one of its records is broken on the way.
    const invalid: Partial<ServiceRecord>[] = Array.from({ length: 8 }, (_, i) => ({
      DATAHORA: new Date(now - 30_000 + i * 1_000).toISOString(),
      USUARIO: 'RELINVALIBROKEN',
      RESULTADO: 21,
      NOMEARQUIVO: `/in/BROKEN/RET_${i}.RET`,
    }));
    await runScenario({
      name: 'invalid records',
      faultsText: '8 unreadable records (bad DATAHORA, EVENTO, RESULTADO) among valid ones',
      faults: {},
      invalid,
      rewritePage: (page) => {
        for (const [i, r] of (page.data ?? []).entries()) {
          if (typeof r['NOMEARQUIVO'] !== 'string' || !r['NOMEARQUIVO'].includes('BROKEN')) continue;
          const kind = (i + Number(String(r['NOMEARQUIVO']).replace(/\D/g, ''))) % 3;
          if (kind === 0) r['DATAHORA'] = 'yesterday';
          else if (kind === 1) r['EVENTO'] = 'seven';
          else r['RESULTADO'] = { code: 21 };
        }
      },
    });
  });

  it('pages of 1,000 large records', async () => {
    const filler = 'X'.repeat(1_500);
    await runScenario({
      name: 'large pages',
      faultsText: 'pages of 1,000 records of ~2 KB each (3,000+ records)',
      faults: {},
      usersPerBatch: 4,
      successesPerBatch: 1_500,
      extra: (i) => ({ MENSAGEM: `${filler}${i}`, CONEXAO: `${filler.slice(0, 300)}${i}` }),
      poll: { page_size: 1000 },
      timeoutMs: 60_000,
    });
  });
});
