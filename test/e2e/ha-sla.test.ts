import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { HAVE_POSTGRES, PostgresServer } from '../helpers/postgres-server.js';
import { HAVE_REDIS } from '../helpers/redis-server.js';
import { success, until } from './helpers/e2e-daemon.js';
import { HaScenario } from './helpers/ha-scenario.js';

/**
 * The SLA ledger with two replicas on Redis and PostgreSQL (contract section 11): the leader is killed with -9
 * between two deadlines; the next leader goes on judging, and every replica reports each planted occurrence
 * as planned, once.
 */

const needs = existsSync(CLI) && HAVE_REDIS && HAVE_POSTGRES;
if (!needs && process.env['CI'] === 'true') throw new Error('the HA SLA test needs the built CLI, redis-server and PostgreSQL (.ci/run installs them)');

const occurrencesSchema = z.object({
  occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), deadline: z.string(), outcome: z.string(), lateness_seconds: z.number().nullable() })),
});

describe.skipIf(!needs)('SLA ledger with two replicas on Redis and PostgreSQL', () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await PostgresServer.start();
  });
  afterAll(() => pg?.stop());

  it('a leader killed between deadlines: the next one judges on; every replica reads each occurrence once, as planned', async () => {
    const s = await HaScenario.create(['a']);
    try {
      const url = await pg.createDatabase('tw_ha_sla');
      s.write({
        rules: [{ name: 'PartnerFileMissing', type: 'missing_file', deadline: '*/20 * * * * *', window: '15s', for_each: { label: 'user', values: ['A', 'B', 'C'] } }],
        extra: { history: { postgres: { url } } },
      });
      await s.start('r1');
      await s.start('r2');
      const first = await s.leader(['r1', 'r2']);
      const other = first === 'r1' ? 'r2' : 'r1';
      const D1 = Math.ceil((Date.now() + 8_000) / 20_000) * 20_000;
      const D2 = D1 + 20_000;
      const D3 = D2 + 20_000;
      const file = (user: string, at: number) => success(at, { USUARIO: user, NOMEARQUIVO: `${user}.RET`, INSTANCE: 'PROD01' });
      s.inject('a', [file('A', D1 - 5_000), file('B', D1 + 5_000), file('A', D2 - 3_000), file('C', D2 + 4_000)]);
      // After D1 is judged (and B's late file read), before D2: the leader dies.
      await until(D1 + 9_000);
      await s.replica(first).kill('SIGKILL');
      expect(await s.leader([other])).toBe(other);
      await until(D3 + 4_000);
      await s.start(first);
      const truth = new Map([
        [`${D1}/A`, ['on_time', null]],
        [`${D1}/B`, ['late', 5]],
        [`${D1}/C`, ['missing', null]],
        [`${D2}/A`, ['on_time', null]],
        [`${D2}/B`, ['missing', null]],
        [`${D2}/C`, ['late', 4]],
      ]);
      const day = new Date(D1).toISOString().slice(0, 10);
      const dayAfter = new Date(D3 + 86_400_000).toISOString().slice(0, 10);
      for (const replica of [other, first]) {
        const list = await eventually(async () => {
          const all = occurrencesSchema.parse(await (await fetch(`${s.replica(replica).url}/api/v1/sla/occurrences?from=${day}&to=${dayAfter}`)).json()).occurrences;
          const ours = all.filter((o) => truth.has(`${Date.parse(o.deadline)}/${o.key['user']}`));
          return ours.length === truth.size && ours.every((o) => o.outcome !== 'missing' || truth.get(`${Date.parse(o.deadline)}/${o.key['user']}`)?.[0] === 'missing') ? all : undefined;
        }, 20_000);
        const ids = list.map((o) => `${o.deadline}/${o.key['user']}`);
        expect(new Set(ids).size, 'each occurrence once').toBe(ids.length);
        for (const o of list) {
          const want = truth.get(`${Date.parse(o.deadline)}/${o.key['user']}`);
          if (want) expect([o.key['user'], o.outcome, o.lateness_seconds]).toEqual([o.key['user'], ...want]);
        }
      }
    } finally {
      await s.cleanup();
    }
  }, 150_000);
});
