import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startCaptureServer } from '../helpers/capture-server.js';
import { eventually } from '../helpers/daemon-process.js';
import { HistoryBackend } from '../helpers/history-backends.js';
import { Scenario, sleep, success, until } from '../e2e/helpers/e2e-daemon.js';
import { webhookPayloadSchema } from '../e2e/helpers/payloads.js';
import { recordResult, seededRandom } from './harness.js';

/**
 * A restart changes nothing (contract section 11b, issue 50), proved against a truth planted in the simulator: four
 * partners each owe a file every 20 s (window 10 s); for each deadline the seeded PRNG decides whether a partner's
 * file comes on time, late (8 s after the deadline, before the next window opens) or not at all. The daemon is
 * stopped at random moments — SIGTERM and kill -9, inside windows, at deadlines, inside group_wait — and started
 * again after a random pause. At the end:
 *
 * - the ledger must hold every deadline from the first to the last exactly as planted (those of the pauses
 *   included: judged from the history by the next start);
 * - the webhook must have heard, per partner, exactly the truth's episodes: a `firing` when a file is first missed, a
 *   `resolved` when a file comes (late, or on time for a later deadline) — no resolved without a cause, no second
 *   firing of an alert that was firing.
 *
 * A stop while the receiver takes a message (or within ACK_QUIET_MS of its answer) is moved past it: that message
 * may be sent again with the same idempotency key (the contract's one exception), which would not be a fault.
 */

const SEED = Number(process.env['RELIABILITY_SEED'] ?? 20261201);
const DEADLINES = Number(process.env['RELIABILITY_DEADLINES'] ?? 9);
const EVERY = 20_000;
const PARTNERS = ['P1', 'P2', 'P3', 'P4'];
const ACK_QUIET_MS = 100;
type Outcome = 'on_time' | 'late' | 'missing';

const occurrencesSchema = z.object({ occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), deadline: z.string(), outcome: z.string() })) });

/** The notifications a daemon that never stopped sends for one partner: an episode opens at a miss, ends at a file. */
function episodes(outcomes: readonly Outcome[]): string[] {
  const out: string[] = [];
  let open = false;
  for (const o of outcomes) {
    if (o === 'on_time') {
      if (open) out.push('resolved');
      open = false;
      continue;
    }
    if (!open) out.push('firing');
    open = o === 'missing';
    if (o === 'late') out.push('resolved');
  }
  return out;
}

describe('reliability: a restart changes nothing (SIGTERM and kill -9 at random moments, against a planted truth)', () => {
  const backend = new HistoryBackend('sqlite');
  afterAll(() => backend.close());

  it('keeps the ledger and the notifications of a daemon that never stopped', async () => {
    const random = seededRandom(SEED);
    let inFlight = 0;
    let lastAckAt = 0;
    const hook = await startCaptureServer(
      () => {
        inFlight = Math.max(0, inFlight - 1);
        lastAckAt = Date.now();
        return { status: 200, body: 'ok' };
      },
      () => {
        inFlight += 1;
      },
    );
    const s = await Scenario.create('restart-truth');
    const { history } = await backend.config();
    const startedAt = Date.now();
    try {
      s.write({
        rules: [
          {
            name: 'PartnerFile',
            type: 'missing_file',
            match: { file: ['PF_*.CSV'] },
            for_each: { label: 'user', values: PARTNERS },
            deadline: '*/20 * * * * *',
            timezone: 'UTC',
            window: '10s',
            severity: 'critical',
          },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook`, send_resolved: true } }],
        route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
        extra: { history },
      });
      // The truth: the first deadline whose window opens after the daemon is up, then every 20 s.
      const first = Math.ceil((Date.now() + 15_000) / EVERY) * EVERY;
      const deadlines = Array.from({ length: DEADLINES }, (_, i) => first + i * EVERY);
      const pick = (): Outcome => {
        const r = random();
        return r < 0.4 ? 'on_time' : r < 0.7 ? 'late' : 'missing';
      };
      const truth = new Map(deadlines.map((d) => [d, Object.fromEntries(PARTNERS.map((p) => [p, pick()])) as Record<string, Outcome>]));
      for (const [d, plan] of truth) {
        for (const p of PARTNERS) {
          if (plan[p] === 'on_time') s.inject([success(d - 5_000, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}.CSV` })]);
          if (plan[p] === 'late') s.inject([success(d + 8_000, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}_LATE.CSV` })]);
        }
      }

      await s.start();
      const stops: string[] = [];
      // Stops at random moments until the last deadline: run 4–16 s, stopped (SIGTERM or kill -9) for 0–12 s.
      const end = deadlines[deadlines.length - 1] as number;
      while (Date.now() < end - 6_000) {
        await sleep(4_000 + random() * 12_000);
        if (Date.now() >= end - 6_000) break;
        const waitUntil = Date.now() + 2_000;
        while ((inFlight > 0 && Date.now() < waitUntil) || Date.now() - lastAckAt < ACK_QUIET_MS) await sleep(5);
        inFlight = 0;
        const signal = random() < 0.5 ? 'SIGTERM' : 'SIGKILL';
        const at = Date.now();
        await s.daemon!.kill(signal);
        await sleep(random() * 12_000);
        stops.push(`${signal === 'SIGTERM' ? 'TERM' : 'KILL'}@${((at - first) / 1000).toFixed(1)}s+${((Date.now() - at) / 1000).toFixed(1)}s`);
        await s.start();
      }
      await until(end + 12_000);

      // The ledger: every planted deadline, each partner once, as planted.
      const day = (t: number) => new Date(t).toISOString().slice(0, 10);
      const expectedLedger = deadlines.flatMap((d) => PARTNERS.map((p) => `${new Date(d).toISOString()} ${p} ${truth.get(d)?.[p] ?? '?'}`)).sort();
      const ledger = await eventually(
        async () => {
          const listed = occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day(first - 86_400_000)}&to=${day(end + 86_400_000)}&limit=5000`)).json()).occurrences;
          const mine = listed.filter((o) => Date.parse(o.deadline) >= first && Date.parse(o.deadline) <= end).map((o) => `${new Date(Date.parse(o.deadline)).toISOString()} ${o.key['user'] ?? ''} ${o.outcome}`).sort();
          return mine.length >= expectedLedger.length ? mine : undefined;
        },
        30_000,
      ).catch(() => [] as string[]);

      // The notifications: per partner, the truth's episodes.
      await sleep(2_000);
      const heard = new Map<string, string[]>(PARTNERS.map((p) => [p, []]));
      for (const r of hook.requests) {
        for (const a of webhookPayloadSchema.parse(JSON.parse(r.body)).alerts) heard.get(a.labels['user'] ?? '')?.push(a.status);
      }
      const expectedHeard = new Map(PARTNERS.map((p) => [p, episodes(deadlines.map((d) => truth.get(d)?.[p] ?? 'on_time'))]));
      const ledgerWrong = expectedLedger.filter((e) => !ledger.includes(e)).length + ledger.filter((e) => !expectedLedger.includes(e)).length;
      const sent = [...expectedHeard.values()].flat().length;
      const wrong = PARTNERS.filter((p) => JSON.stringify(heard.get(p)) !== JSON.stringify(expectedHeard.get(p)));
      recordResult({
        scenario: 'restarts vs truth: single node',
        faults: `${stops.length} stops (SIGTERM/kill -9, seed ${SEED}) over ${DEADLINES} deadlines x ${PARTNERS.length} partners`,
        expected: sent,
        delivered: [...heard.values()].flat().length,
        duplicated: 0,
        lost: 0,
        falseAlerts: wrong.length,
        ...(ledgerWrong > 0 || wrong.length > 0 ? { note: `ledger: ${ledgerWrong} of ${expectedLedger.length} occurrences differ; notifications differ for ${wrong.join(', ') || 'none'}` } : {}),
      });
      console.log(`restart truth (seed ${SEED}): ${stops.length} stops: ${stops.join(', ')}; took ${Math.round((Date.now() - startedAt) / 1000)} s`);
      expect(ledger, `ledger (seed ${SEED}, stops ${stops.join(', ')})`).toEqual(expectedLedger);
      expect(new Map([...heard].map(([p, list]) => [p, list.join(' ')])), `notifications (seed ${SEED}, stops ${stops.join(', ')})`).toEqual(
        new Map([...expectedHeard].map(([p, list]) => [p, list.join(' ')])),
      );
      expect(stops.length).toBeGreaterThanOrEqual(4);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 420_000);
});
