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
/** A late file comes this long after its deadline (before the next window opens, 10 s after). */
const LATE_MS = 8_000;
/** How long after a deadline (or a start) the daemon may take to decide and notify it: poll, catch-up, group_wait. */
const DECIDE_MS = 15_000;
/** Around a stop's edges, what was seen by the process before or after it is not known to the millisecond. */
const SLACK_MS = 2_000;
type Outcome = 'on_time' | 'late' | 'missing';

const occurrencesSchema = z.object({ occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), deadline: z.string(), outcome: z.string() })) });

/** One episode of a partner's alert: from the deadline of a first miss to the file that ends it (late, or on time later). */
interface Episode {
  from: number;
  /** When it ends (the late file, or the next on-time deadline); undefined: still open at the end. */
  to: number | undefined;
  /** A late file ends it: the resolved message says "arrived late at …" for this deadline. */
  lateFor: number | undefined;
}

/** The episodes a daemon that never stopped notifies for one partner: one opens at a miss, ends at a file. */
function episodes(deadlines: readonly number[], outcomes: readonly Outcome[]): Episode[] {
  const out: Episode[] = [];
  let open: Episode | undefined;
  deadlines.forEach((d, i) => {
    const o = outcomes[i];
    if (o === 'on_time') {
      if (open) open.to = d;
      open = undefined;
      return;
    }
    open ??= out[out.push({ from: d, to: undefined, lateFor: undefined }) - 1];
    if (o === 'late' && open) {
      open.to = d + LATE_MS;
      open.lateFor = d;
      open = undefined;
    }
  });
  return out;
}

/**
 * Whether the receivers heard a partner's episodes as a daemon that never stopped would have told them: a firing and a
 * resolved (naming the right late deadline) per episode, in order, each firing's startsAt at its episode's start (or
 * when the daemon came back to see it). An episode that began and ended wholly while nothing ran may be absent: no
 * process saw it live (it is in the ledger); a daemon that never stopped could have flapped it inside group_wait too.
 * Returns what differs, or '' when nothing does.
 */
function compareEpisodes(expected: readonly Episode[], heard: ReadonlyArray<{ status: string; startsAt: number; lateFor: number | undefined }>, stops: ReadonlyArray<{ from: number; to: number }>, end: number): string {
  const inOneStop = (e: Episode): boolean => e.to !== undefined && stops.some((s) => e.from >= s.from - SLACK_MS && e.to! <= s.to + SLACK_MS);
  const stopOf = (t: number): { from: number; to: number } | undefined => stops.find((s) => t >= s.from - SLACK_MS && t <= s.to + SLACK_MS);
  let h = 0;
  for (const e of expected) {
    const firing = heard[h];
    const seenFrom = e.from;
    const seenUntil = Math.max(e.from, stopOf(e.from)?.to ?? e.from) + DECIDE_MS;
    const matches = firing?.status === 'firing' && firing.startsAt >= seenFrom - SLACK_MS && firing.startsAt <= seenUntil;
    if (!matches) {
      if (inOneStop(e)) continue;
      return `episode from ${(e.from - (expected[0]?.from ?? 0)) / 1000}s: expected a firing with startsAt in [${new Date(seenFrom).toISOString()}, ${new Date(seenUntil).toISOString()}], heard ${firing ? `${firing.status} startsAt ${new Date(firing.startsAt).toISOString()}` : 'nothing'}`;
    }
    h++;
    if (e.to === undefined || e.to > end) continue;
    const resolved = heard[h];
    if (resolved?.status !== 'resolved') return `episode from ${new Date(e.from).toISOString()}: expected its resolved, heard ${resolved?.status ?? 'nothing'}`;
    if (resolved.lateFor !== e.lateFor) return `episode from ${new Date(e.from).toISOString()}: resolved ${resolved.lateFor !== undefined ? `"arrived late" for ${new Date(resolved.lateFor).toISOString()}` : 'without a late file'}, expected ${e.lateFor !== undefined ? `late for ${new Date(e.lateFor).toISOString()}` : 'the next deadline on time'}`;
    h++;
  }
  return h < heard.length ? `${heard.length - h} more notification(s) than the truth: ${heard.slice(h).map((x) => x.status).join(' ')}` : '';
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
          if (plan[p] === 'late') s.inject([success(d + LATE_MS, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}_LATE.CSV` })]);
        }
      }

      // Every deadline before the first that the daemon's first look-back (5 minutes) can judge: on time.
      for (let d = first - EVERY; d > Date.now() - 6 * 60_000; d -= EVERY) {
        s.inject(PARTNERS.map((p) => success(d - 5_000, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}_EARLY.CSV` })));
      }
      await s.start();
      const stops: string[] = [];
      const stopped: Array<{ from: number; to: number }> = [];
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
        stopped.push({ from: at, to: Date.now() });
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
      const heard = new Map<string, Array<{ status: string; startsAt: number; lateFor: number | undefined }>>(PARTNERS.map((p) => [p, []]));
      for (const r of hook.requests) {
        for (const a of webhookPayloadSchema.parse(JSON.parse(r.body)).alerts) {
          const late = /\(deadline (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) UTC\)$/.exec(a.annotations['resolution'] ?? '');
          heard.get(a.labels['user'] ?? '')?.push({ status: a.status, startsAt: Date.parse(a.startsAt), lateFor: late ? Date.parse(`${(late[1] ?? '').replace(' ', 'T')}Z`) : undefined });
        }
      }
      const expectedEpisodes = new Map(PARTNERS.map((p) => [p, episodes(deadlines, deadlines.map((d) => truth.get(d)?.[p] ?? 'on_time'))]));
      const ledgerWrong = expectedLedger.filter((e) => !ledger.includes(e)).length + ledger.filter((e) => !expectedLedger.includes(e)).length;
      const differences = PARTNERS.map((p) => [p, compareEpisodes(expectedEpisodes.get(p) ?? [], heard.get(p) ?? [], stopped, Date.now())] as const).filter(([, d]) => d !== '');
      const sent = [...expectedEpisodes.values()].flat().length;
      const wrong = differences.map(([p]) => p);
      recordResult({
        scenario: 'restarts vs truth: single node',
        faults: `${stops.length} stops (SIGTERM/kill -9, seed ${SEED}) over ${DEADLINES} deadlines x ${PARTNERS.length} partners`,
        expected: sent,
        delivered: [...heard.values()].flat().filter((x) => x.status === 'firing').length,
        duplicated: 0,
        lost: 0,
        falseAlerts: wrong.length,
        ...(ledgerWrong > 0 || wrong.length > 0 ? { note: `ledger: ${ledgerWrong} of ${expectedLedger.length} occurrences differ; ${differences.map(([p, d]) => `${p}: ${d}`).join('; ')}` } : {}),
      });
      console.log(`restart truth (seed ${SEED}): ${stops.length} stops: ${stops.join(', ')}; took ${Math.round((Date.now() - startedAt) / 1000)} s`);
      if (wrong.length > 0) {
        console.log(`truth (deadline offsets from the first, s): ${deadlines.map((d) => `${(d - first) / 1000}: ${PARTNERS.map((p) => `${p}=${truth.get(d)?.[p] ?? ''}`).join(' ')}`).join('\n')}`);
        for (const p of wrong) console.log(`${p} heard: ${(heard.get(p) ?? []).map((x) => `${x.status}@${((x.startsAt - first) / 1000).toFixed(1)}s${x.lateFor !== undefined ? ` late for ${(x.lateFor - first) / 1000}s` : ''}`).join(', ')}`);
      }
      expect(ledger, `ledger (seed ${SEED}, stops ${stops.join(', ')})`).toEqual(expectedLedger);
      expect(Object.fromEntries(differences), `notifications (seed ${SEED}, stops ${stops.join(', ')})`).toEqual({});
      expect(stops.length).toBeGreaterThanOrEqual(4);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 420_000);
});
