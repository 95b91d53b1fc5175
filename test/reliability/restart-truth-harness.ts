import { expect } from 'vitest';
import { z } from 'zod';
import { startCaptureServer } from '../helpers/capture-server.js';
import { eventually } from '../helpers/daemon-process.js';
import { sleep } from '../e2e/helpers/e2e-daemon.js';
import { recordResult } from './harness.js';
import type { CapturedRequest } from '../helpers/capture-server.js';
import type { ServiceRecord } from '../../src/source/transfer.js';
import { success } from '../e2e/helpers/e2e-daemon.js';
import { webhookPayloadSchema } from '../e2e/helpers/payloads.js';

/**
 * The planted truth of the restart scenarios (issue 50): partners owe a file every EVERY ms; for each deadline a
 * seeded PRNG says whether it comes on time, LATE_MS late (before the next window opens) or not at all. From it, the
 * ledger a daemon must write and the notifications it must send, whatever stops it met.
 */

export const EVERY = 20_000;
export const WINDOW = '10s';
export const PARTNERS = ['P1', 'P2', 'P3', 'P4'];
export type Outcome = 'on_time' | 'late' | 'missing';
/** A late file comes this long after its deadline (before the next window opens, 10 s after). */
export const LATE_MS = 8_000;
/** How long after a deadline (or a start) the daemon may take to decide and notify it: poll, catch-up, group_wait. */
const DECIDE_MS = 15_000;
/** Around a stop's edges, what was seen by the process before or after it is not known to the millisecond. */
const SLACK_MS = 2_000;

/** The rule every restart scenario watches. */
export const PARTNER_FILE_RULE = {
  name: 'PartnerFile',
  type: 'missing_file',
  match: { file: ['PF_*.CSV'] },
  for_each: { label: 'user', values: PARTNERS },
  deadline: `*/${EVERY / 1000} * * * * *`,
  timezone: 'UTC',
  window: WINDOW,
  severity: 'critical',
};

/** The truth of `count` deadlines from the first one at least 15 s ahead; its files handed to `inject`. */
export function plantTruth(random: () => number, count: number, inject: (records: Partial<ServiceRecord>[]) => void): { first: number; deadlines: number[]; truth: Map<number, Record<string, Outcome>> } {
  const first = Math.ceil((Date.now() + 15_000) / EVERY) * EVERY;
  const deadlines = Array.from({ length: count }, (_, i) => first + i * EVERY);
  const pick = (): Outcome => {
    const r = random();
    return r < 0.4 ? 'on_time' : r < 0.7 ? 'late' : 'missing';
  };
  const truth = new Map(deadlines.map((d) => [d, Object.fromEntries(PARTNERS.map((p) => [p, pick()])) as Record<string, Outcome>]));
  const records: Partial<ServiceRecord>[] = [];
  for (const [d, plan] of truth) {
    for (const p of PARTNERS) {
      if (plan[p] === 'on_time') records.push(success(d - 5_000, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}.CSV`, INSTANCE: 'PROD01' }));
      if (plan[p] === 'late') records.push(success(d + LATE_MS, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}_LATE.CSV`, INSTANCE: 'PROD01' }));
    }
  }
  // Every deadline before the first that a first look-back (5 minutes) can judge: on time.
  for (let d = first - EVERY; d > Date.now() - 6 * 60_000; d -= EVERY) {
    for (const p of PARTNERS) records.push(success(d - 5_000, { USUARIO: p, NOMEARQUIVO: `PF_${p}_${d}_EARLY.CSV`, INSTANCE: 'PROD01' }));
  }
  inject(records);
  return { first, deadlines, truth };
}

/** The ledger the truth owes: `ISO-deadline partner outcome`, sorted. */
export function expectedLedger(deadlines: readonly number[], truth: ReadonlyMap<number, Record<string, Outcome>>): string[] {
  return deadlines.flatMap((d) => PARTNERS.map((p) => `${new Date(d).toISOString()} ${p} ${truth.get(d)?.[p] ?? '?'}`)).sort();
}

/** What the webhook heard, per partner, in order: status, startsAt and the deadline a late file was for. */
export function heardOf(requests: readonly CapturedRequest[]): Map<string, Heard[]> {
  const heard = new Map<string, Heard[]>(PARTNERS.map((p) => [p, []]));
  for (const r of requests) {
    for (const a of webhookPayloadSchema.parse(JSON.parse(r.body)).alerts) {
      const late = /\(deadline (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) UTC(?:, \+\w+)?\)$/.exec(a.annotations['resolution'] ?? '');
      heard.get(a.labels['user'] ?? '')?.push({ status: a.status, startsAt: Date.parse(a.startsAt), lateFor: late ? Date.parse(`${(late[1] ?? '').replace(' ', 'T')}Z`) : undefined });
    }
  }
  return heard;
}

export interface Heard {
  status: string;
  startsAt: number;
  lateFor: number | undefined;
}

/** Per partner, what its notifications lack or add against the truth ('' when nothing), given the stops met. */
export function notificationDifferences(deadlines: readonly number[], truth: ReadonlyMap<number, Record<string, Outcome>>, heard: ReadonlyMap<string, Heard[]>, stops: ReadonlyArray<{ from: number; to: number }>): Array<readonly [string, string]> {
  return PARTNERS.map((p) => [p, compareEpisodes(episodes(deadlines, deadlines.map((d) => truth.get(d)?.[p] ?? 'on_time')), heard.get(p) ?? [], stops, Date.now())] as const).filter(([, d]) => d !== '');
}

/** How many episodes the truth has (the notifications a daemon that never stopped sends, firing and resolved). */
export function episodeCount(deadlines: readonly number[], truth: ReadonlyMap<number, Record<string, Outcome>>): number {
  return PARTNERS.reduce((n, p) => n + episodes(deadlines, deadlines.map((d) => truth.get(d)?.[p] ?? 'on_time')).length, 0);
}

/** One episode of a partner's alert: from the deadline of a first miss to the file that ends it (late, or on time later). */
interface Episode {
  from: number;
  /** When it ends (the late file, or the next on-time deadline); undefined: still open at the end. */
  to: number | undefined;
  /** A late file ends it: the resolved message says "arrived late at …" for this deadline. */
  lateFor: number | undefined;
}

/** The episodes a daemon that never stopped notifies for one partner: one opens at a miss, ends at a file. */
export function episodes(deadlines: readonly number[], outcomes: readonly Outcome[]): Episode[] {
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
function compareEpisodes(expected: readonly Episode[], heard: readonly Heard[], stops: ReadonlyArray<{ from: number; to: number }>, end: number): string {
  const inOneStop = (e: Episode): boolean => e.to !== undefined && stops.some((s) => e.from >= s.from - SLACK_MS && e.to! <= s.to + SLACK_MS);
  const stopOf = (t: number): { from: number; to: number } | undefined => stops.find((s) => t >= s.from - SLACK_MS && t <= s.to + SLACK_MS);
  let h = 0;
  for (const e of expected) {
    const firing = heard[h];
    const seenFrom = e.from;
    const seenUntil = Math.max(e.from, stopOf(e.from)?.to ?? e.from) + DECIDE_MS;
    const ends = e.to !== undefined && e.to <= end;
    const next = heard[h + 1];
    const matches = firing?.status === 'firing' && firing.startsAt >= seenFrom - SLACK_MS && firing.startsAt <= seenUntil;
    // An episode that may be unheard is taken only when what was heard is it, whole (its firing, and its resolved with
    // the same late deadline): else what was heard is a later episode's.
    const wholly = matches && (!ends || (next?.status === 'resolved' && next.lateFor === e.lateFor));
    if (inOneStop(e) && !wholly) continue;
    if (!matches) {
      return `episode from ${(e.from - (expected[0]?.from ?? 0)) / 1000}s: expected a firing with startsAt in [${new Date(seenFrom).toISOString()}, ${new Date(seenUntil).toISOString()}], heard ${firing ? `${firing.status} startsAt ${new Date(firing.startsAt).toISOString()}` : 'nothing'}`;
    }
    h++;
    if (!ends) continue;
    const resolved = heard[h];
    if (resolved?.status !== 'resolved') return `episode from ${new Date(e.from).toISOString()}: expected its resolved, heard ${resolved?.status ?? 'nothing'}`;
    if (resolved.lateFor !== e.lateFor) return `episode from ${new Date(e.from).toISOString()}: resolved ${resolved.lateFor !== undefined ? `"arrived late" for ${new Date(resolved.lateFor).toISOString()}` : 'without a late file'}, expected ${e.lateFor !== undefined ? `late for ${new Date(e.lateFor).toISOString()}` : 'the next deadline on time'}`;
    h++;
  }
  return h < heard.length ? `${heard.length - h} more notification(s) than the truth: ${heard.slice(h).map((x) => x.status).join(' ')}` : '';
}

// The two scenarios' shared steps (restart-truth-single and restart-truth-cluster run on two lanes at once).
export const SEED = Number(process.env['RELIABILITY_SEED'] ?? 20261201);
export const DEADLINES = Number(process.env['RELIABILITY_DEADLINES'] ?? 8);
const ACK_QUIET_MS = 100;

const occurrencesSchema = z.object({ occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), deadline: z.string(), outcome: z.string() })) });

/** The ledger as one replica lists it over the truth's deadlines: `ISO-deadline partner outcome`, sorted. */
export async function ledgerOf(url: string, first: number, end: number, expected: number): Promise<string[]> {
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
export async function receiver() {
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
export function judge(name: string, faults: string, plan: { first: number; deadlines: number[]; truth: Map<number, Record<string, Outcome>> }, ledger: string[], heard: ReturnType<typeof heardOf>, stopped: Array<{ from: number; to: number }>): void {
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
