import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/start-simulator.js';
import type { ServiceRecord } from '../../../src/source/transfer.js';
import { eventually, startDaemonProcess, type DaemonProcess } from '../../helpers/daemon-process.js';

/**
 * One acceptance scenario: its own simulator (only injected records), temp dir, state dir and daemon
 * process(es). Scenarios of a file run concurrently, so nothing here is shared between them.
 */

export const MFT_PASSWORD = 'mft-Pa55-never-logged';

export const apiAlertSchema = z.object({
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  state: z.enum(['pending', 'firing']),
  activeAt: z.string(),
  fingerprint: z.string(),
});
export type ApiAlert = z.infer<typeof apiAlertSchema>;

const alertsResponseSchema = z.object({ alerts: z.array(apiAlertSchema) });

export const statusSchema = z.object({
  ready: z.boolean(),
  sources: z.array(
    z.object({
      name: z.string(),
      up: z.boolean(),
      streams: z.array(z.object({ stream: z.string(), cursor: z.union([z.string(), z.number(), z.null()]) }).passthrough()),
    }),
  ),
  config: z.object({ lastReloadSuccessful: z.boolean(), lastReloadError: z.string().optional() }).passthrough().nullable(),
});
export type DaemonStatus = z.infer<typeof statusSchema>;

export interface ScenarioOptions {
  rules: unknown[];
  receivers: unknown[];
  route: Record<string, unknown>;
  poll?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

export class Scenario {
  readonly dir: string;
  readonly configFile: string;
  readonly rulesFile: string;
  readonly stateDir: string;
  daemon: DaemonProcess | undefined;
  /** Every daemon process started, so cleanup can kill them all. */
  private readonly daemons: DaemonProcess[] = [];

  private constructor(
    readonly sim: RunningSimulator,
    prefix: string,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `tw-e2e-${prefix}-`));
    this.configFile = join(this.dir, 'config.yaml');
    this.rulesFile = join(this.dir, 'rules.yaml');
    this.stateDir = join(this.dir, 'state');
  }

  static async create(prefix: string): Promise<Scenario> {
    const sim = await startSimulator({ generate: false, seed: 3, username: 'watch', password: MFT_PASSWORD });
    return new Scenario(sim, prefix);
  }

  /** Write config and rules; fast polling so the test does not wait on the daemon's clock. */
  write(opts: ScenarioOptions): void {
    writeFileSync(this.rulesFile, stringifyYaml({ rules: opts.rules }));
    writeFileSync(
      this.configFile,
      stringifyYaml({
        sources: [{ name: 'sim', base_url: this.sim.url, username: 'watch', password: MFT_PASSWORD, timeout: '5s', retries: 1 }],
        poll: {
          interval: '300ms',
          success_interval: '300ms',
          delay: '200ms',
          overlap: '30s',
          initial_lookback: '5m',
          max_window: '1h',
          stale_after: '3s',
          ...opts.poll,
        },
        state: { dir: this.stateDir },
        rule_files: [this.rulesFile],
        receivers: opts.receivers,
        route: opts.route,
        server: { listen: '127.0.0.1:0' },
        log: { level: 'info' },
        ...opts.extra,
      }),
    );
  }

  async start(): Promise<DaemonProcess> {
    const d = await startDaemonProcess(this.configFile, { timeoutMs: 30_000 });
    this.daemons.push(d);
    this.daemon = d;
    await eventually(async () => (await fetch(`${d.url}/readyz`)).ok, 30_000);
    return d;
  }

  /** A daemon this scenario's test started itself (another way than `start`): cleanup ends it with the others. */
  track(d: DaemonProcess): DaemonProcess {
    this.daemons.push(d);
    return d;
  }

  get url(): string {
    if (!this.daemon) throw new Error('daemon not started');
    return this.daemon.url;
  }

  inject(records: Partial<ServiceRecord>[]): void {
    this.sim.inject(records);
  }

  async alerts(): Promise<ApiAlert[]> {
    const res = await fetch(`${this.url}/api/v1/alerts`);
    if (!res.ok) throw new Error(`/api/v1/alerts answered ${res.status}`);
    return alertsResponseSchema.parse(await res.json()).alerts;
  }

  async statusText(): Promise<string> {
    return (await fetch(`${this.url}/api/v1/status`)).text();
  }

  async status(): Promise<DaemonStatus> {
    return statusSchema.parse(JSON.parse(await this.statusText()));
  }

  /** The first series of `name` whose labels include every one of `labels` (as `k="v"`), or undefined. */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
    const text = await (await fetch(`${this.url}/metrics`)).text();
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const line = text.split('\n').find((l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && wanted.every((w) => l.includes(w)));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  /** Wait until every stream of the source has read past `t` (epoch ms): the daemon has seen what came before. */
  async waitPolledPast(t: number, timeoutMs = 20_000): Promise<void> {
    await eventually(async () => {
      const s = await this.status();
      const streams = s.sources.flatMap((src) => src.streams);
      return streams.length > 0 && streams.every((st) => st.cursor !== null && toMs(st.cursor) > t);
    }, timeoutMs);
  }

  /** Every daemon log line as one string (for secret checks). */
  allLogs(): string {
    return this.daemons.map((d) => `${d.logs.map((l) => JSON.stringify(l)).join('\n')}\n${d.stdoutLines.join('\n')}\n${d.stderr()}`).join('\n');
  }

  async cleanup(): Promise<void> {
    for (const d of this.daemons) await d.kill('SIGKILL').catch(() => undefined);
    await this.sim.close();
    // A file the last moments of a process wrote may land while the folder is walked (ENOTEMPTY): tried again.
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}

function toMs(cursor: string | number): number {
  return typeof cursor === 'number' ? cursor : Date.parse(cursor);
}

/** A failed reception as the service reports it. */
export function failure(at: number, fields: Partial<ServiceRecord>): Partial<ServiceRecord> {
  return { DATAHORA: new Date(at).toISOString(), EVENTO: 7, RESULTADO: 53, MENSAGEM: 'Connection reset by peer', ...fields };
}

/** A successful reception. */
export function success(at: number, fields: Partial<ServiceRecord>): Partial<ServiceRecord> {
  return { DATAHORA: new Date(at).toISOString(), EVENTO: 7, RESULTADO: 0, MENSAGEM: 'File received successfully', ...fields };
}

/** A cron (6 fields, with seconds) that fires once a day at `at` (UTC): one deadline the test controls. */
export function dailyCronAt(at: number): string {
  const d = new Date(at);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

/** The next whole second at least `ms` from now. */
export function secondAfter(ms: number): number {
  return Math.ceil((Date.now() + ms) / 1000) * 1000;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Wait for the clock to pass `t` (epoch ms). */
export async function until(t: number): Promise<void> {
  const wait = t - Date.now();
  if (wait > 0) await sleep(wait);
}
