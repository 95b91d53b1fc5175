import { afterAll, describe, expect, it } from 'vitest';
import { HistoryBackend } from '../helpers/history-backends.js';
import { Scenario, sleep, until } from '../e2e/helpers/e2e-daemon.js';
import { seededRandom } from './harness.js';
import { DEADLINES, PARTNERS, PARTNER_FILE_RULE, SEED, heardOf, judge, ledgerOf, plantTruth, receiver } from './restart-truth-harness.js';

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

describe('reliability: a restart changes nothing (against a planted truth), single node', () => {
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
});
