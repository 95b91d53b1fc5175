import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import type { ServiceRecord } from '../../src/source/transfer.js';
import { CLI, startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import {
  RULES_FILE,
  dashboardExpressions,
  referencedMetricNames,
  rulesExpressions,
  substituteGrafanaVariables,
} from '../metrics/promql-expressions.js';
import { requireBinary, runBinary } from '../metrics/promtool.js';
import { freePort } from '../helpers/free-port.js';

/**
 * The real thing: Debian's Prometheus scrapes `transfer-watch run` (built CLI) polling the simulator. The
 * counters Prometheus stores must match the records the simulator served, every dashboard and rules
 * expression must evaluate against it, and Prometheus must load the rules file.
 */

const prometheus = requireBinary('prometheus');
const promtool = requireBinary('promtool');
const cliMissing = existsSync(CLI) ? undefined : `${CLI} not built (npm test runs "npm run build" first)`;
if (cliMissing && process.env['CI'] === 'true') throw new Error(`${cliMissing}; required when CI=true`);
if (cliMissing) console.warn(`skipping the real-Prometheus test: ${cliMissing}`);
const skipReason = prometheus.skipReason ?? promtool.skipReason ?? cliMissing;

const JOB = 'transfer-watch';

/** The transfers the simulator serves: two instances, both events, two error codes, distinct sizes. */
function plannedRecords(now: number): Partial<ServiceRecord>[] {
  const out: Partial<ServiceRecord>[] = [];
  for (let i = 0; i < 24; i++) {
    const instance = i % 3 === 0 ? 'PROD2' : 'PROD1';
    const evento = i % 2 === 0 ? 7 : 5;
    // Errors only on PROD1, of two codes.
    const code = instance === 'PROD1' && i < 12 ? 53 : instance === 'PROD1' && i < 15 ? 12 : 0;
    out.push({
      DATAHORA: new Date(now - 90_000 + i * 2_000).toISOString(),
      INSTANCE: instance,
      USUARIO: `BANK${i % 4}`,
      EVENTO: evento,
      NOMEARQUIVO: `FILE_${i}.RET`,
      RESULTADO: code,
      MENSAGEM: code === 0 ? 'ok' : `failed with ${code}`,
      TAMARQUIVO: 1000 * (i + 1),
    });
  }
  return out;
}

function eventOf(code: number | undefined): string {
  return code === 5 ? 'transmission' : code === 7 ? 'reception' : String(code);
}

const vectorSchema = z.object({
  status: z.literal('success'),
  data: z.object({
    resultType: z.string(),
    result: z.array(z.object({ metric: z.record(z.string(), z.string()), value: z.tuple([z.number(), z.string()]) })),
  }),
});
type VectorSample = z.infer<typeof vectorSchema>['data']['result'][number];

const errorSchema = z.object({ status: z.literal('error'), error: z.string() });

/** Retry `fn` until it returns a value that is not undefined, or fail with `what` and the last error. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined>, attempts = 120): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

describe.skipIf(skipReason !== undefined)('real Prometheus scraping transfer-watch run', () => {
  let sim: RunningSimulator;
  let daemon: DaemonProcess | undefined;
  let prom: ChildProcess | undefined;
  let promUrl = '';
  let promLog = '';
  let records: Partial<ServiceRecord>[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'tw-e2e-prom-'));

  async function query(expr: string): Promise<VectorSample[]> {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body: unknown = await res.json();
    const failed = errorSchema.safeParse(body);
    if (failed.success) throw new Error(`query failed: ${expr}: ${failed.data.error}`);
    return vectorSchema.parse(body).data.result;
  }

  async function scalar(expr: string): Promise<number | undefined> {
    const result = await query(expr);
    return result.length === 1 && result[0] ? Number(result[0].value[1]) : undefined;
  }

  beforeAll(async () => {
    sim = await startSimulator({ generate: false, seed: 7 });
    records = plannedRecords(Date.now());
    sim.inject(records);

    writeFileSync(
      join(tmp, 'rules.yaml'),
      stringifyYaml({
        rules: [
          {
            name: 'E2EErrorBurst',
            type: 'error_burst',
            match: { mft_instance: ['PROD*'] },
            group_by: ['mft_instance'],
            threshold: 3,
            window: '1h',
            severity: 'critical',
            annotations: { summary: '{{count}} failed transfers' },
          },
          // A file expected every 10 s that never comes: the SLA ledger's gauges (the dashboard's SLA panels) have data.
          { name: 'E2EExpectedFile', type: 'missing_file', match: { user: ['NOBODY'] }, deadline: '*/10 * * * * *', window: '10s', severity: 'warning', sla: { objective: 0.9 } },
        ],
      }),
    );
    const configFile = join(tmp, 'config.yaml');
    writeFileSync(
      configFile,
      stringifyYaml({
        sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo' }],
        // Every cycle re-fetches the whole history (overlap > age of the records): counting once is put to the test.
        poll: { interval: '1s', success_interval: '1s', delay: '1s', overlap: '10m', initial_lookback: '1h' },
        state: { dir: join(tmp, 'state') },
        rule_files: [join(tmp, 'rules.yaml')],
        receivers: [{ name: 'stdout', console: {} }],
        route: { receiver: 'stdout', group_by: ['alertname'], group_wait: '1s', group_interval: '5s' },
        server: { listen: '127.0.0.1:0' },
        log: { level: 'info' }, // the helper waits for the "HTTP server listening" line
      }),
    );
    daemon = await startDaemonProcess(configFile);
    const target = new URL(daemon.url).host;

    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const promConfig = join(tmp, 'prometheus.yml');
    writeFileSync(
      promConfig,
      stringifyYaml({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [RULES_FILE],
        scrape_configs: [{ job_name: JOB, static_configs: [{ targets: [target] }] }],
      }),
    );
    prom = spawn(
      prometheus.path ?? 'prometheus',
      [
        `--config.file=${promConfig}`,
        `--storage.tsdb.path=${join(tmp, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-lifecycle',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prom.stdout?.on('data', (d: Buffer) => (promLog += d.toString()));
    prom.stderr?.on('data', (d: Buffer) => (promLog += d.toString()));
    await eventually('Prometheus to be ready', async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined)).catch(
      (err: unknown) => {
        throw new Error(`${String(err)}\nprometheus log:\n${promLog.slice(-2000)}`);
      },
    );

    // The records are served again and again by the overlapping windows...
    await eventually('the simulator to serve every record three times', async () =>
      sim.stats().recordsServed >= 3 * records.length ? true : undefined,
    );
    // ...and Prometheus has scraped since then.
    const after = Date.now() / 1000;
    await eventually('a scrape after the repeated fetches', async () => {
      const ts = await scalar(`max(timestamp(mft_transfers_total{job="${JOB}"}))`);
      return ts !== undefined && ts > after + 1 ? true : undefined;
    });
    // rate() over the dashboard's 1m needs several samples.
    await eventually('five scrapes', async () =>
      ((await scalar(`count_over_time(up{job="${JOB}"}[1m])`)) ?? 0) >= 5 ? true : undefined,
    );
    // The burst alert has fired and been sent, so the alert and notification series exist.
    await eventually('a notification to be sent', async () =>
      ((await scalar(`sum(transfer_watch_notifications_total{job="${JOB}", outcome="sent"})`)) ?? 0) >= 1 ? true : undefined,
    );
    // The ledger has judged the expected file and its figures are scraped (refreshed every 15 s).
    await eventually('the SLA gauges', async () => ((await query(`transfer_watch_sla_budget_remaining{job="${JOB}"}`)).length > 0 ? true : undefined));
  }, 90_000);

  afterAll(async () => {
    if (prom && prom.exitCode === null) {
      const exited = new Promise((r) => prom?.once('exit', r));
      prom.kill('SIGTERM');
      await exited;
    }
    await daemon?.kill('SIGTERM');
    await sim?.close();
    rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  it('scrapes the daemon: target up', async () => {
    expect(await scalar(`up{job="${JOB}"}`)).toBe(1);
  });

  it('stores each served transfer exactly once, by instance, event and result', async () => {
    const expected = new Map<string, number>();
    for (const r of records) {
      const key = `${r.INSTANCE}|${eventOf(r.EVENTO)}|${r.RESULTADO === 0 ? 'success' : 'error'}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    const got = new Map<string, number>();
    for (const s of await query(`sum by (mft_instance, event, result) (mft_transfers_total{job="${JOB}", source="sim"})`)) {
      const v = Number(s.value[1]);
      if (v > 0) got.set(`${s.metric['mft_instance']}|${s.metric['event']}|${s.metric['result']}`, v);
    }
    expect(got).toEqual(expected);
    expect(sim.stats().recordsServed).toBeGreaterThanOrEqual(3 * records.length);
  });

  it('stores bytes, error codes, records per stream and the latest occurrence time', async () => {
    const totalBytes = records.reduce((sum, r) => sum + (r.TAMARQUIVO ?? 0), 0);
    expect(await scalar(`sum(mft_transfer_bytes_total{job="${JOB}"})`)).toBe(totalBytes);

    const codes = await query(`sum by (code) (mft_transfer_errors_total{job="${JOB}"})`);
    const byCode = Object.fromEntries(codes.map((s) => [s.metric['code'], Number(s.value[1])]));
    const expectedByCode: Record<string, number> = {};
    for (const r of records.filter((x) => x.RESULTADO !== 0)) {
      const code = String(r.RESULTADO);
      expectedByCode[code] = (expectedByCode[code] ?? 0) + 1;
    }
    expect(Object.keys(expectedByCode).sort()).toEqual(['12', '53']);
    expect(byCode).toEqual(expectedByCode);

    const failures = records.filter((r) => r.RESULTADO !== 0).length;
    expect(await scalar(`transfer_watch_records_total{job="${JOB}", stream="failures"}`)).toBe(failures);
    expect(await scalar(`transfer_watch_records_total{job="${JOB}", stream="successes"}`)).toBe(records.length - failures);
    expect(await scalar(`transfer_watch_records_invalid_total{job="${JOB}"}`)).toBe(0);

    const latest = Math.max(...records.filter((r) => r.INSTANCE === 'PROD2').map((r) => Date.parse(r.DATAHORA ?? '')));
    expect(await scalar(`max(mft_last_transfer_timestamp_seconds{job="${JOB}", mft_instance="PROD2"})`)).toBe(latest / 1000);
    expect(await scalar(`transfer_watch_source_up{job="${JOB}", source="sim"}`)).toBe(1);
  });

  it('evaluates every dashboard expression, each returning data', async () => {
    const empty: string[] = [];
    for (const { origin, expr } of dashboardExpressions()) {
      const result = await query(substituteGrafanaVariables(expr));
      if (result.length === 0) empty.push(`${origin}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });

  it('evaluates every rules expression, and each metric it uses has data', async () => {
    const missing: string[] = [];
    for (const { origin, expr } of rulesExpressions()) {
      await query(expr); // throws with Prometheus's message when it does not parse
      for (const name of referencedMetricNames(expr)) {
        if ((await query(`count(${name}{job="${JOB}"})`)).length === 0) missing.push(`${origin}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('loads the rules file with every rule healthy', async () => {
    const body: unknown = await (await fetch(`${promUrl}/api/v1/rules`)).json();
    const parsed = z
      .object({
        status: z.literal('success'),
        data: z.object({
          groups: z.array(z.object({ name: z.string(), rules: z.array(z.object({ name: z.string(), health: z.string() })) })),
        }),
      })
      .parse(body);
    const rules = parsed.data.groups.flatMap((g) => g.rules);
    expect(rules.length).toBe(rulesExpressions().length);
    await eventually('every rule evaluated', async () => {
      const again = z
        .object({ data: z.object({ groups: z.array(z.object({ rules: z.array(z.object({ health: z.string() })) })) }) })
        .parse(await (await fetch(`${promUrl}/api/v1/rules`)).json());
      return again.data.groups.flatMap((g) => g.rules).every((r) => r.health === 'ok') ? true : undefined;
    });
  });

  it('serves a scrape that promtool check metrics accepts', async () => {
    const scrape = await (await fetch(`${daemon?.url ?? ''}/metrics`)).text();
    expect(scrape).toContain('mft_transfers_total');
    const result = await runBinary(promtool.path ?? 'promtool', ['check', 'metrics'], scrape);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
