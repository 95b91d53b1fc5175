import type { Transfer } from '../source/transfer.js';
import { RUN_MARK, addRunValues, mergeRunSummaries, nameShape, newRunSummaries, shapeKey, type RunSummary } from './name-shape.js';

/**
 * What is kept of a flow's files: per UTC day a count and the first arrivals, and per run of its name shape what
 * it held. Memory grows with flows × days, never with transfers: discover reads months of history through it,
 * and the daemon keeps the same rows in its history store.
 */

/** Arrivals kept per flow and UTC day: a flow with more a day is no schedule of deadlines (at most MAX_DEADLINES). */
export const ARRIVALS_KEPT_PER_DAY = 16;
const DAY_MS = 86_400_000;

/** One flow's one UTC day. */
export interface FlowDay {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  count: number;
  /** Epoch ms of the day's first arrivals, sorted, at most ARRIVALS_KEPT_PER_DAY. */
  arrivals: number[];
}

export interface FlowIdentity {
  source: string;
  event: string;
  user: string;
  /** The name shape's pieces (constant text around the runs). */
  pieces: string[];
}

export interface FlowSummary extends FlowIdentity {
  runs: RunSummary[];
  /** A file of the flow and the instance it came through (to ask the configured rules whether they watch it). */
  sample: { file: string; instance: string };
  days: Map<string, FlowDay>;
}

/** The key of a flow: source, event, user and name shape (NUL between the fields, RUN_MARK between the pieces). */
export function flowKey(f: FlowIdentity): string {
  return keyOf(f.source, f.event, f.user, f.pieces.join(RUN_MARK));
}

function keyOf(source: string, event: string, user: string, shape: string): string {
  return `${source}\u0000${event}\u0000${user}\u0000${shape}`;
}

/** The files of a flow in its days (its successful transfers). */
export function filesOf(f: FlowSummary): number {
  let n = 0;
  for (const d of f.days.values()) n += d.count;
  return n;
}

/** The last day formatted: transfers come in time order, so nearly every call is this one. */
let lastDay: { n: number; text: string } = { n: NaN, text: '' };

export function utcDay(ms: number): string {
  const n = Math.floor(ms / DAY_MS);
  if (n !== lastDay.n) lastDay = { n, text: new Date(n * DAY_MS).toISOString().slice(0, 10) };
  return lastDay.text;
}

/** Counts an arrival and keeps it in the day's sorted list while the list holds fewer than the cap or a later one. */
export function addArrival(day: FlowDay, time: number): void {
  day.count++;
  const a = day.arrivals;
  if (a.length >= ARRIVALS_KEPT_PER_DAY && time >= (a[a.length - 1] as number)) return;
  let i = a.length;
  while (i > 0 && (a[i - 1] as number) > time) i--;
  a.splice(i, 0, time);
  if (a.length > ARRIVALS_KEPT_PER_DAY) a.pop();
}

/** Merges one stored or remote day into a summary's day (counts add; arrivals stay the first ones). */
export function mergeDay(into: FlowDay, from: FlowDay): void {
  into.count += from.count;
  const all = [...into.arrivals, ...from.arrivals].sort((a, b) => a - b);
  into.arrivals = all.slice(0, ARRIVALS_KEPT_PER_DAY);
}

/**
 * Collects successful transfers into flow summaries. Failed attempts are not a flow's arrivals and are not
 * given here (the caller reads `results=0`, or the daemon passes its successes).
 */
export class FlowSummaries {
  private readonly flows = new Map<string, FlowSummary>();
  /** Transfers past `maxFlows` distinct flows: counted, not kept (names whose letters vary at random). */
  overflowTransfers = 0;
  transfers = 0;

  constructor(private readonly maxFlows = 100_000) {}

  /** Adds a successful transfer; returns its flow and day (undefined for a failure or past `maxFlows`). */
  add(t: Transfer): { flow: FlowSummary; day: FlowDay } | undefined {
    if (t.result !== 'success') return undefined;
    this.transfers++;
    const values: string[] = [];
    const key = keyOf(t.source, t.event, t.user, shapeKey(t.file, values));
    let flow = this.flows.get(key);
    if (!flow) {
      if (this.flows.size >= this.maxFlows) {
        this.overflowTransfers++;
        return undefined;
      }
      const shape = nameShape(t.file);
      flow = { source: t.source, event: t.event, user: t.user, pieces: [...shape.pieces], runs: newRunSummaries(shape.values), sample: { file: t.file, instance: t.instance }, days: new Map() };
      this.flows.set(key, flow);
    } else {
      addRunValues(flow.runs, values);
    }
    const dayKey = utcDay(t.time);
    let day = flow.days.get(dayKey);
    if (!day) flow.days.set(dayKey, (day = { day: dayKey, count: 0, arrivals: [] }));
    addArrival(day, t.time);
    return { flow, day };
  }

  /** Forgets the days before `day` (UTC `YYYY-MM-DD`), and the flows left without a day. */
  forget(day: string): void {
    for (const [key, flow] of this.flows) {
      for (const d of flow.days.keys()) if (d < day) flow.days.delete(d);
      if (flow.days.size === 0) this.flows.delete(key);
    }
  }

  /** Adds a summary read from elsewhere (the history store, another replica's rows). */
  merge(from: FlowSummary): void {
    const key = flowKey(from);
    const flow = this.flows.get(key);
    if (!flow) {
      this.flows.set(key, { ...from, runs: from.runs.map((r) => ({ ...r })), days: new Map([...from.days].map(([k, d]) => [k, { ...d, arrivals: [...d.arrivals] }])) });
      return;
    }
    mergeRunSummaries(flow.runs, from.runs);
    for (const d of from.days.values()) {
      const mine = flow.days.get(d.day);
      if (mine) mergeDay(mine, d);
      else flow.days.set(d.day, { ...d, arrivals: [...d.arrivals] });
    }
  }

  all(): FlowSummary[] {
    return [...this.flows.values()];
  }

  get size(): number {
    return this.flows.size;
  }
}
