import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startCaptureServer } from '../helpers/capture-server.js';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { HAVE_REDIS, REDIS_SERVER } from '../helpers/redis-server.js';
import { failure, sleep } from './helpers/e2e-daemon.js';
import { HaScenario } from './helpers/ha-scenario.js';
import { webhookPayloadSchema } from './helpers/payloads.js';

/**
 * Contract 14 on three real replicas sharing Redis: an ack taken by a follower's API is seen and obeyed by the
 * leader (no escalation of that group); the other group's escalation steps go once each, also when the leader is
 * killed -9 between two steps (the next leader sends the second step, never the first again).
 */

if (!HAVE_REDIS) {
  if (process.env['CI'] === 'true') throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);
  console.warn(`skipping the HA on-call test: ${REDIS_SERVER} not found (apt-get install redis-server)`);
}

const alertsSchema = z.object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), ack: z.object({ by: z.string() }).optional() })) });
const escalationSchema = z.object({ escalation: z.object({ step: z.number(), of: z.number() }).optional() });

describe.skipIf(!existsSync(CLI) || !HAVE_REDIS)('on-call on three replicas (contract 14)', () => {
  it("a follower's ack is obeyed by the leader; each escalation step goes once, across a kill -9 of the leader between steps", async () => {
    const s = await HaScenario.create(['east']);
    const manager = await startCaptureServer();
    const head = await startCaptureServer();
    try {
      s.write({
        rules: [{ name: 'PartnerErrors', type: 'error_burst', group_by: ['user'], threshold: 3, window: '1h', severity: 'critical' }],
        route: {
          receiver: 'hook',
          group_by: ['alertname', 'user'],
          group_wait: '2s',
          group_interval: '2s',
          repeat_interval: '1h',
          escalate: [
            { after: '10s', receiver: 'manager' },
            { after: '24s', receiver: 'head' },
          ],
        },
        extra: {
          receivers: [
            { name: 'hook', webhook: { url: `${s.hook.url}/hook`, send_resolved: true } },
            { name: 'manager', webhook: { url: `${manager.url}/hook` } },
            { name: 'head', webhook: { url: `${head.url}/hook` } },
          ],
        },
      });
      for (const r of ['r1', 'r2', 'r3']) await s.start(r);
      const leader = await s.leader(['r1', 'r2', 'r3']);
      const follower = ['r1', 'r2', 'r3'].find((r) => r !== leader) ?? 'r1';
      const t = Date.now();
      s.inject('east', ['BANK1', 'BANK2'].flatMap((user) => [0, 1, 2].map((i) => failure(t - 3_000 + i * 100, { INSTANCE: 'PROD01', USUARIO: user, NOMEARQUIVO: `${user}_${i}.RET` }))));
      const told = (user: string) => s.payloads().some((p) => p.status === 'firing' && p.alerts.some((a) => a.labels['user'] === user));
      await eventually(() => told('BANK1') && told('BANK2'), 30_000);

      // BANK1 is acknowledged through a follower's API.
      const res = await fetch(`${s.replica(follower).url}/api/v1/acks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ matchers: ['user="BANK1"'], by: 'ana', comment: 'on it' }),
      });
      expect(res.status).toBe(201);
      // Seen by the leader: its alerts carry the ack.
      await eventually(async () => alertsSchema.parse(await (await fetch(`${s.replica(leader).url}/api/v1/alerts`)).json()).alerts.find((a) => a.labels['user'] === 'BANK1')?.ack?.by === 'ana', 10_000);

      // Step 1 of BANK2 only; then the leader dies before step 2.
      await eventually(() => manager.requests.length >= 1, 30_000);
      await s.replica(leader).kill('SIGKILL');
      const alive = ['r1', 'r2', 'r3'].filter((r) => r !== leader);
      await s.leader(alive);
      await eventually(() => head.requests.length >= 1, 45_000);
      await sleep(6_000);

      const users = (requests: readonly { body: string }[]) =>
        requests.map((r) => {
          const payload = webhookPayloadSchema.parse(JSON.parse(r.body));
          return `${payload.alerts.map((a) => a.labels['user']).join(',')}#${escalationSchema.parse(JSON.parse(r.body)).escalation?.step ?? '?'}`;
        });
      expect(users(manager.requests), 'step 1 once, of the group nobody acknowledged').toEqual(['BANK2#1']);
      expect(users(head.requests), 'step 2 once, by the next leader').toEqual(['BANK2#2']);
    } finally {
      await s.cleanup();
      await manager.close();
      await head.close();
    }
  }, 150_000);
});
