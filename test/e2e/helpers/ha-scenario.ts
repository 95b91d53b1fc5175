import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/start-simulator.js';
import type { ServiceRecord } from '../../../src/source/transfer.js';
import { startCaptureServer } from '../../helpers/capture-server.js';
import { eventually, startDaemonProcess, type DaemonProcess } from '../../helpers/daemon-process.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { MFT_PASSWORD } from './e2e-daemon.js';
import { webhookPayloadSchema, type WebhookPayload } from './payloads.js';

const haStatusSchema = z.object({
  ha: z.object({ replica: z.string(), leader: z.string().nullable(), leading: z.boolean(), redisUp: z.boolean(), sources: z.record(z.string(), z.string().nullable()) }),
});
const alertsSchema = z.object({
  alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), annotations: z.record(z.string(), z.string()), state: z.string(), silenced: z.boolean() })),
});

export const LEASE_TTL_MS = 2_000;
export const POLL_INTERVAL_MS = 300;

/**
 * A high-availability acceptance scenario: Debian's redis-server on a free port, one simulator per source
 * (only injected records), a webhook capture server, and N real `transfer-watch run` replicas sharing them.
 */
export class HaScenario {
  readonly dir: string;
  readonly configFile: string;
  readonly replicas = new Map<string, DaemonProcess>();
  private readonly all: DaemonProcess[] = [];

  private constructor(
    readonly redis: RedisServer,
    readonly sims: Map<string, RunningSimulator>,
    readonly hook: Awaited<ReturnType<typeof startCaptureServer>>,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'tw-ha-'));
    this.configFile = join(this.dir, 'config.yaml');
  }

  /** `receiverDown` while true, the webhook answers 503 (the notification waits in the leader's outbox). */
  receiverDown = false;
  /** Every request the webhook got, with the status it answered (`hook.requests` keeps only the 2xx ones). */
  readonly received: Array<{ body: string; status: number }> = [];

  static async create(sources: string[]): Promise<HaScenario> {
    const redis = await RedisServer.start();
    const sims = new Map<string, RunningSimulator>();
    for (const s of sources) sims.set(s, await startSimulator({ generate: false, seed: 3, username: 'watch', password: MFT_PASSWORD }));
    let scenario: HaScenario | undefined = undefined;
    const hook = await startCaptureServer((req) => {
      const status = scenario?.receiverDown ? 503 : 200;
      scenario?.received.push({ body: req.body, status });
      return { status, body: status === 200 ? 'ok' : 'down' };
    });
    scenario = new HaScenario(redis, sims, hook);
    return scenario;
  }

  write(opts: { rules: unknown[]; route?: Record<string, unknown>; extra?: Record<string, unknown> }): void {
    const rulesFile = join(this.dir, 'rules.yaml');
    writeFileSync(rulesFile, stringifyYaml({ rules: opts.rules }));
    writeFileSync(
      this.configFile,
      stringifyYaml({
        sources: [...this.sims].map(([name, sim]) => ({ name, base_url: sim.url, username: 'watch', password: MFT_PASSWORD, timeout: '5s', retries: 1 })),
        poll: { interval: `${POLL_INTERVAL_MS}ms`, success_interval: `${POLL_INTERVAL_MS}ms`, delay: '200ms', overlap: '30s', initial_lookback: '5m', max_window: '1h', stale_after: '20s' },
        rule_files: [rulesFile],
        receivers: [{ name: 'hook', webhook: { url: `${this.hook.url}/hook`, send_resolved: true } }],
        route: opts.route ?? { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '2s', group_interval: '2s', repeat_interval: '1h' },
        server: { listen: '127.0.0.1:0' },
        log: { level: 'info' },
        ha: { redis: { url: this.redis.url, key_prefix: 'tw-test:' }, lease_ttl: `${LEASE_TTL_MS}ms`, replica_name: '${REPLICA}' },
        ...opts.extra,
      }),
    );
  }

  async start(name: string): Promise<DaemonProcess> {
    const d = await startDaemonProcess(this.configFile, { timeoutMs: 30_000, env: { REPLICA: name } });
    this.replicas.set(name, d);
    this.all.push(d);
    await eventually(async () => (await fetch(`${d.url}/readyz`)).ok, 30_000);
    return d;
  }

  replica(name: string): DaemonProcess {
    const d = this.replicas.get(name);
    if (!d) throw new Error(`no replica ${name}`);
    return d;
  }

  inject(source: string, records: Partial<ServiceRecord>[]): void {
    this.sims.get(source)?.inject(records);
  }

  async status(name: string): Promise<z.infer<typeof haStatusSchema>['ha']> {
    return haStatusSchema.parse(await (await fetch(`${this.replica(name).url}/api/v1/status`)).json()).ha;
  }

  /** The leader, once every live replica agrees on one. */
  async leader(names: string[]): Promise<string> {
    return eventually(async () => {
      const views = await Promise.all(names.map((n) => this.status(n)));
      const leaders = new Set(views.map((v) => v.leader));
      const leading = views.filter((v) => v.leading).map((v) => v.replica);
      return leaders.size === 1 && leading.length === 1 && views[0]?.leader === leading[0] ? leading[0] : undefined;
    }, 20_000);
  }

  async alerts(name: string): Promise<z.infer<typeof alertsSchema>['alerts']> {
    return alertsSchema.parse(await (await fetch(`${this.replica(name).url}/api/v1/alerts`)).json()).alerts;
  }

  /** Silence `user` for an hour through one replica's Alertmanager API; returns the HTTP status. */
  async silenceUser(replica: string, user: string, comment: string): Promise<number> {
    const res = await fetch(`${this.replica(replica).url}/api/v2/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        matchers: [{ name: 'user', value: user, isRegex: false, isEqual: true }],
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
        createdBy: 'alice',
        comment,
      }),
    });
    return res.status;
  }

  payloads(): WebhookPayload[] {
    return this.hook.requests.map((r) => webhookPayloadSchema.parse(JSON.parse(r.body)));
  }

  /** Every replica's log lines, for fencing and secret checks. */
  logs(name: string): Array<Record<string, unknown>> {
    return this.replica(name).logs;
  }

  async cleanup(): Promise<void> {
    for (const d of this.all) {
      if (d.proc.signalCode === null && d.proc.exitCode === null) {
        try {
          process.kill(d.proc.pid ?? 0, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
      await d.kill('SIGKILL').catch(() => undefined);
    }
    for (const sim of this.sims.values()) await sim.close();
    await this.hook.close();
    await this.redis.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
