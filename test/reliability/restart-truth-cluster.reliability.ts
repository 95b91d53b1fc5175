import { describe, expect, it } from 'vitest';
import { HAVE_POSTGRES, PostgresServer } from '../helpers/postgres-server.js';
import { HAVE_REDIS } from '../helpers/redis-server.js';
import { sleep, until } from '../e2e/helpers/e2e-daemon.js';
import { HaScenario } from '../e2e/helpers/ha-scenario.js';
import { seededRandom } from './harness.js';
import { DEADLINES, PARTNERS, PARTNER_FILE_RULE, SEED, heardOf, judge, ledgerOf, plantTruth } from './restart-truth-harness.js';

/** The cluster half of the restart-truth scenario (its single node in restart-truth-single.reliability.ts, the same truth and judge). */
describe('reliability: a restart changes nothing (against a planted truth), cluster of three', () => {
  it.skipIf(!HAVE_REDIS || !HAVE_POSTGRES)('a cluster of three through leader kills, a leader paused past its lease and a rolling restart keeps them too', async () => {
    const random = seededRandom(SEED + 1);
    const pg = await PostgresServer.start();
    const s = await HaScenario.create(['a']);
    const startedAt = Date.now();
    try {
      const url = await pg.createDatabase('tw_restart_truth');
      s.write({
        rules: [PARTNER_FILE_RULE],
        route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
        extra: { history: { postgres: { url } } },
      });
      const plan = plantTruth(random, DEADLINES, (records) => s.inject('a', records));
      const replicas = ['r1', 'r2', 'r3'];
      for (const r of replicas) await s.start(r);
      const end = plan.deadlines[plan.deadlines.length - 1] as number;
      const stops: string[] = [];
      const stopped: Array<{ from: number; to: number }> = [];
      const leaderNow = () => s.leader(replicas);
      const at = () => `${((Date.now() - plan.first) / 1000).toFixed(1)}s`;
      // The faults in turn, at random moments, until the last deadline.
      const faults = ['kill', 'stop', 'rolling', 'kill', 'stop', 'kill'];
      for (const fault of faults) {
        await sleep(3_000 + random() * 10_000);
        if (Date.now() >= end - 6_000) break;
        const leader = await leaderNow();
        const from = Date.now();
        if (fault === 'kill') {
          await s.replica(leader).kill('SIGKILL');
          await sleep(random() * 6_000);
          await s.start(leader);
        } else if (fault === 'stop') {
          const pid = s.replica(leader).proc.pid ?? 0;
          process.kill(pid, 'SIGSTOP');
          await sleep(3_000 + random() * 4_000);
          process.kill(pid, 'SIGCONT');
        } else {
          // Every replica in turn, the leader last: SIGTERM, then started again.
          for (const r of [...replicas.filter((x) => x !== leader), leader]) {
            await s.replica(r).kill('SIGTERM');
            await s.start(r);
          }
        }
        stops.push(`${fault}(${leader})@${at()}+${((Date.now() - from) / 1000).toFixed(1)}s`);
        stopped.push({ from, to: Date.now() });
      }
      await until(end + 12_000);
      const leader = await leaderNow();
      const ledgers = await Promise.all(replicas.map((r) => ledgerOf(s.replica(r).url, plan.first, end, plan.deadlines.length * PARTNERS.length)));
      await sleep(2_000);
      console.log(`restart truth, cluster (seed ${SEED + 1}): ${stops.join(', ')}; took ${Math.round((Date.now() - startedAt) / 1000)} s`);
      // Every replica reads the same ledger.
      for (const [i, l] of ledgers.entries()) expect(l, replicas[i]).toEqual(ledgers[replicas.indexOf(leader)]);
      judge('cluster of three', `${stops.length} faults (${faults.join(', ')}; seed ${SEED + 1}) over ${DEADLINES} deadlines x ${PARTNERS.length} partners`, plan, ledgers[0] ?? [], heardOf(s.hook.requests), stopped);
    } finally {
      await s.cleanup();
      await pg.stop();
    }
  }, 420_000);
});
