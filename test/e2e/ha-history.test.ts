import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { HAVE_POSTGRES, PostgresServer } from '../helpers/postgres-server.js';
import { HAVE_REDIS } from '../helpers/redis-server.js';
import { failure } from './helpers/e2e-daemon.js';
import { HaScenario } from './helpers/ha-scenario.js';

/**
 * The history with two replicas on Redis and one PostgreSQL (contract sections 9 and 12): the leader records,
 * every replica reads. The receiver fails, then takes the notification; the leader is killed with -9 after
 * delivery; the next leader notifies a new alert and both resolutions. The attempts any replica reports are the
 * requests the receiver got, one for one, and every transition is recorded once.
 */

const needs = existsSync(CLI) && HAVE_REDIS && HAVE_POSTGRES;
if (!needs && process.env['CI'] === 'true') throw new Error('the HA history test needs the built CLI, redis-server and PostgreSQL (.ci/run installs them)');

const eventsSchema = z.object({ events: z.array(z.object({ event: z.string(), fingerprint: z.string(), labels: z.record(z.string(), z.string()) })), next: z.string().nullable() });
const attemptsSchema = z.object({
  attempts: z.array(z.object({ status: z.string(), outcome: z.string(), attempt: z.number(), fingerprints: z.array(z.string()) })),
  next: z.string().nullable(),
});

function burst(user: string, t: number) {
  return Array.from({ length: 3 }, (_, i) => failure(t - 1500 + i * 100, { INSTANCE: 'PROD01', USUARIO: user, NOMEARQUIVO: `F${i}.RET` }));
}

describe.skipIf(!needs)('history with two replicas on Redis and PostgreSQL', () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await PostgresServer.start();
  });
  afterAll(() => pg?.stop());

  it('a leader killed after delivery: the recorded attempts are the requests the receiver got, one for one; every replica reads the same', async () => {
    const s = await HaScenario.create(['a']);
    try {
      const url = await pg.createDatabase('tw_ha');
      s.write({
        rules: [{ name: 'TransferErrorBurst', type: 'error_burst', group_by: ['user'], threshold: 3, window: '20s', severity: 'critical' }],
        route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '500ms', group_interval: '1s', repeat_interval: '1h' },
        extra: { history: { postgres: { url } } },
      });
      await s.start('r1');
      await s.start('r2');
      const first = await s.leader(['r1', 'r2']);
      const other = first === 'r1' ? 'r2' : 'r1';

      s.receiverDown = true;
      s.inject('a', burst('U1', Date.now()));
      await eventually(() => s.received.filter((r) => r.status === 503).length >= 2, 30_000);
      s.receiverDown = false;
      await s.replica(first).waitForLog((l) => l['msg'] === 'notification sent' && l['status'] === 'firing', 30_000);

      await s.replica(first).kill('SIGKILL');
      expect(await s.leader([other])).toBe(other);
      s.inject('a', burst('U2', Date.now()));
      // Both alerts resolve (their bursts leave the 20 s window), and the resolutions are told.
      await eventually(() => s.received.filter((r) => r.status === 200 && r.body.includes('"status":"resolved"')).length >= 2, 60_000);
      await s.replica(other).waitForLog((l) => l['msg'] === 'notification sent' && l['status'] === 'resolved', 20_000);
      await new Promise((r) => setTimeout(r, 2_000));

      // The killed replica comes back as a follower: it reads the same history from PostgreSQL.
      await s.start(first);
      for (const replica of [other, first]) {
        const base = s.replica(replica).url;
        const attempts = attemptsSchema.parse(await (await fetch(`${base}/api/v1/history/notifications?limit=1000`)).json()).attempts.reverse();
        expect(attempts.map((a) => [a.status, a.outcome === 'sent' ? 200 : 503])).toEqual(s.received.map((r) => [JSON.parse(r.body).status, r.status]));
        const events = eventsSchema.parse(await (await fetch(`${base}/api/v1/history/alerts?limit=1000`)).json()).events.reverse();
        for (const user of ['U1', 'U2']) {
          expect(events.filter((e) => e.labels['user'] === user).map((e) => e.event)).toEqual(['firing', 'resolved']);
        }
      }
    } finally {
      await s.cleanup();
    }
  }, 180_000);
});
