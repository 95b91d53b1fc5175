import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startCaptureServer } from '../helpers/capture-server.js';
import { eventually } from '../helpers/daemon-process.js';
import { HistoryBackend } from '../helpers/history-backends.js';
import { HAVE_POSTGRES, PostgresServer } from '../helpers/postgres-server.js';
import { HAVE_REDIS } from '../helpers/redis-server.js';
import { Scenario, sleep, until } from '../e2e/helpers/e2e-daemon.js';
import { HaScenario } from '../e2e/helpers/ha-scenario.js';
import { recordResult, seededRandom } from './harness.js';
import { PARTNERS, PARTNER_FILE_RULE, episodeCount, expectedLedger, heardOf, notificationDifferences, plantTruth, type Outcome } from './restart-truth-harness.js';

/**
 * A restart changes nothing (contract section 11b, issue 50), proved against a truth planted in the simulator: four
 * partners each owe a file every 20 s (window 10 s); for each deadline the seeded PRNG decides whether a partner's
 * file comes on time, late (8 s after the deadline, before the next window opens) or not at all. The daemon is
 * stopped at random moments — inside windows, at deadlines, inside group_wait — and started again after a random
 * pause: SIGTERM and kill -9 of a single node (SQLite); leader kill -9, SIGSTOP past the lease and a rolling restart
 * of all three replicas of a cluster (Redis, PostgreSQL). At the end:
 *
 * - the ledger must hold every deadline exactly as planted (those of the pauses included: judged from the history by
 *   the next start or leader);
 * - the webhook must have heard, per partner, the truth's episodes: a firing when a file is first missed, a resolved
 *   when a file comes (late — naming its deadline — or on time for a later deadline): no resolved without a cause, no
 *   second firing. Only an episode that began and ended wholly inside a stop may go unheard (it is in the ledger).
 *
 * A stop while the receiver takes a message (or within ACK_QUIET_MS of its answer) is moved past it: that message
 * may be sent again with the same idempotency key (the contract's one exception), which would not be a fault.
 */

const SEED = Number(process.env['RELIABILITY_SEED'] ?? 20261201);
const DEADLINES = Number(process.env['RELIABILITY_DEADLINES'] ?? 8);
const ACK_QUIET_MS = 100;

const occurrencesSchema = z.object({ occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), deadline: z.string(), outcome: z.string() })) });

/** The ledger as one replica lists it over the truth's deadlines: `ISO-deadline partner outcome`, sorted. */
async function ledgerOf(url: string, first: number, end: number, expected: number): Promise<string[]> {
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  return eventually(
    async () => {
      const listed = occurrencesSchema.parse(await (await fetch(`${url}/api/v1/sla/occurrences?from=${day(first - 86_400_000)}&to=${day(end + 86_400_000)}&limit=5000`)).json()).occurrences;
      const mine = listed.filter((o) => Date.parse(o.deadline) >= first && Date.parse(o.deadline) <= end).map((o) => `${new Date(Date.parse(o.deadline)).toISOString()} ${o.key['user'] ?? ''} ${o.outcome}`).sort();
      return mine.length >= expected ? mine : undefined;
    },
    30_000,
  ).catch(() => [] as string[]);
}

/** A receiver that says when a message is in flight or was just answered (stops are moved past those moments). */
async function receiver() {
  const state = { inFlight: 0, lastAckAt: 0 };
  const hook = await startCaptureServer(
    () => {
      state.inFlight = Math.max(0, state.inFlight - 1);
      state.lastAckAt = Date.now();
      return { status: 200, body: 'ok' };
    },
    () => {
      state.inFlight += 1;
    },
  );
  const quiet = async (): Promise<void> => {
    const waitUntil = Date.now() + 2_000;
    while ((state.inFlight > 0 && Date.now() < waitUntil) || Date.now() - state.lastAckAt < ACK_QUIET_MS) await sleep(5);
    state.inFlight = 0;
  };
  return { hook, quiet };
}

/** Compare, record the row, say what differed, and assert. */
function judge(name: string, faults: string, plan: { first: number; deadlines: number[]; truth: Map<number, Record<string, Outcome>> }, ledger: string[], heard: ReturnType<typeof heardOf>, stopped: Array<{ from: number; to: number }>): void {
  const { first, deadlines, truth } = plan;
  const owed = expectedLedger(deadlines, truth);
  const ledgerWrong = owed.filter((e) => !ledger.includes(e)).length + ledger.filter((e) => !owed.includes(e)).length;
  const differences = notificationDifferences(deadlines, truth, heard, stopped);
  const episodesInTruth = episodeCount(deadlines, truth);
  const firings = [...heard.values()].flat().filter((x) => x.status === 'firing').length;
  // An episode that began and ended wholly inside one stop is in the ledger but no process saw it live: with no
  // difference, those are the only episodes not heard, and the row says how many instead of calling them lost.
  const unseen = differences.length === 0 ? episodesInTruth - firings : 0;
  recordResult({
    scenario: `restarts vs truth: ${name}`,
    faults: unseen > 0 ? `${faults}; ${unseen} episode(s) wholly inside a stop: in the ledger, not notified live` : faults,
    expected: episodesInTruth - unseen,
    delivered: firings,
    duplicated: 0,
    lost: 0,
    falseAlerts: differences.length,
    ...(ledgerWrong > 0 || differences.length > 0 ? { note: `ledger: ${ledgerWrong} of ${owed.length} occurrences differ; ${differences.map(([p, d]) => `${p}: ${d}`).join('; ')}` } : {}),
  });
  if (differences.length > 0) {
    console.log(`truth (deadline offsets from the first, s): ${deadlines.map((d) => `${(d - first) / 1000}: ${PARTNERS.map((p) => `${p}=${truth.get(d)?.[p] ?? ''}`).join(' ')}`).join('\n')}`);
    for (const [p] of differences) console.log(`${p} heard: ${(heard.get(p) ?? []).map((x) => `${x.status}@${((x.startsAt - first) / 1000).toFixed(1)}s${x.lateFor !== undefined ? ` late for ${(x.lateFor - first) / 1000}s` : ''}`).join(', ')}`);
  }
  expect(ledger, `${name}: ledger (${faults})`).toEqual(owed);
  expect(Object.fromEntries(differences), `${name}: notifications (${faults})`).toEqual({});
}

describe('reliability: a restart changes nothing (against a planted truth)', () => {
  const backend = new HistoryBackend('sqlite');
  afterAll(() => backend.close());

  it('a single node stopped by SIGTERM and kill -9 at random moments keeps the ledger and the notifications of one that never stopped', async () => {
    const random = seededRandom(SEED);
    const { hook, quiet } = await receiver();
    const s = await Scenario.create('restart-truth');
    const { history } = await backend.config();
    const startedAt = Date.now();
    try {
      s.write({
        rules: [PARTNER_FILE_RULE],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook`, send_resolved: true } }],
        route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
        extra: { history },
      });
      const plan = plantTruth(random, DEADLINES, (records) => s.inject(records));
      await s.start();
      const stops: string[] = [];
      const stopped: Array<{ from: number; to: number }> = [];
      // Stops at random moments until the last deadline: run 4–16 s, stopped (SIGTERM or kill -9) for 0–12 s.
      const end = plan.deadlines[plan.deadlines.length - 1] as number;
      while (Date.now() < end - 6_000) {
        await sleep(4_000 + random() * 12_000);
        if (Date.now() >= end - 6_000) break;
        await quiet();
        const signal = random() < 0.5 ? 'SIGTERM' : 'SIGKILL';
        const at = Date.now();
        await s.daemon!.kill(signal);
        await sleep(random() * 12_000);
        stops.push(`${signal === 'SIGTERM' ? 'TERM' : 'KILL'}@${((at - plan.first) / 1000).toFixed(1)}s+${((Date.now() - at) / 1000).toFixed(1)}s`);
        await s.start();
        stopped.push({ from: at, to: Date.now() });
      }
      await until(end + 12_000);
      const ledger = await ledgerOf(s.url, plan.first, end, plan.deadlines.length * PARTNERS.length);
      await sleep(2_000);
      console.log(`restart truth, single node (seed ${SEED}): ${stops.length} stops: ${stops.join(', ')}; took ${Math.round((Date.now() - startedAt) / 1000)} s`);
      judge('single node', `${stops.length} stops (SIGTERM/kill -9, seed ${SEED}) over ${DEADLINES} deadlines x ${PARTNERS.length} partners`, plan, ledger, heardOf(hook.requests), stopped);
      expect(stops.length).toBeGreaterThanOrEqual(4);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 420_000);

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
