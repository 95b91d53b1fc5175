import { filesOf, mergeDay, type FlowDay, type FlowSummary } from './flow-summary.js';
import { RUN_MARK, type RunSummary } from './name-shape.js';

/**
 * The flows discover learns are families of the flows the summary keeps (contract 13a): the summary keys a flow by
 * its exact name shape, so one delivery sent whole on most days and as `_1of2`/`_2of2` on others was two flows (one
 * irregular, one not proposed), and a partner writing `report_` one week and `REPORT_` the next was two half-flows.
 * Here the shapes that differ only by a part marker or by case are one flow, whose days hold deliveries: the parts
 * of one delivery (within PART_GAP_MS of each other) count once, at the last part — the delivery is complete then.
 */

/** Parts of one delivery arrive within this of each other. */
const PART_GAP_MS = 30 * 60_000;
/** A family writes at most this many patterns (one per casing or part form no other pattern takes); the rest are counted. */
export const MAX_PATTERNS = 4;

export interface FlowFamily {
  /** The family as one flow: the days of every member (parts collapsed to deliveries), the identity of the largest. */
  summary: FlowSummary;
  /** The flows of the summary it is made of, the largest first. */
  members: FlowSummary[];
  /** When a member is in parts: the parts of each delivery when they are always as many (`_1of3` … `_3of3`), and whether some deliveries come whole. */
  parts: { perDelivery: number | undefined; alsoWhole: boolean } | undefined;
}

/** Where a part marker sits in a shape: the piece whose tail begins it, that tail's length, and the runs it holds. */
interface PartMarker {
  piece: number;
  tail: number;
  /** The run of the part's number, and of the count of parts (`of N`) when written. */
  runs: number[];
}

/** `…_1of2`, `…-002of003`, `… part 1 of 2`: the piece before the number, then `of` between the two numbers. */
const OF_TAIL = /(?:[_.\- ](?:part|pt|p)?[_.\- ]?|part|pt)$/i;
const OF_PIECE = /^[_\- ]?of[_\- ]?$/i;
/** `….part2`, `…_part_3`, `…-pt1`: a word for part before the number. */
const PART_TAIL = /[_.\- ](?:part|pt)[_.\- ]?$/i;
/** After the marker: a separator, the extension or the end of the name. */
const AFTER_MARKER = /^(?:$|[_.\- ])/;

function shortNumber(run: RunSummary | undefined): boolean {
  return run !== undefined && /^\d+$/.test(run.first) && run.maxLength <= 3;
}

/** The part marker of a shape, if it has one. */
export function partMarker(pieces: readonly string[], runs: readonly RunSummary[]): PartMarker | undefined {
  for (let j = runs.length - 1; j >= 0; j--) {
    const before = pieces[j] ?? '';
    // `i of n`: runs j and j+1, `of` between them.
    if (j + 1 < runs.length && OF_PIECE.test(pieces[j + 1] ?? '') && shortNumber(runs[j]) && shortNumber(runs[j + 1]) && AFTER_MARKER.test(pieces[j + 2] ?? '')) {
      const tail = OF_TAIL.exec(before);
      if (tail) return { piece: j, tail: tail[0].length, runs: [j, j + 1] };
    }
    const tail = PART_TAIL.exec(before);
    if (tail && shortNumber(runs[j]) && AFTER_MARKER.test(pieces[j + 1] ?? '')) return { piece: j, tail: tail[0].length, runs: [j] };
  }
  return undefined;
}

/** The shape without its part marker (the pieces around it joined), as the family's key has it. */
function wholeShape(f: FlowSummary, marker: PartMarker | undefined): string {
  if (!marker) return f.pieces.join(RUN_MARK);
  const last = marker.runs[marker.runs.length - 1] as number;
  const head = f.pieces.slice(0, marker.piece);
  const joined = (f.pieces[marker.piece] ?? '').slice(0, (f.pieces[marker.piece] ?? '').length - marker.tail) + (f.pieces[last + 1] ?? '');
  return [...head, joined, ...f.pieces.slice(last + 2)].join(RUN_MARK);
}

/** A day of a flow in parts as deliveries: the arrivals within PART_GAP_MS of the previous one are one, at the last. */
function deliveries(day: FlowDay, perDelivery: number | undefined): FlowDay {
  const arrivals: number[] = [];
  for (const at of day.arrivals) {
    const last = arrivals[arrivals.length - 1];
    if (last !== undefined && at - last <= PART_GAP_MS) arrivals[arrivals.length - 1] = at;
    else arrivals.push(at);
  }
  // A day with more files than kept arrivals: its count in deliveries as near as its parts say.
  const count = day.count > day.arrivals.length ? Math.ceil(day.count / (perDelivery ?? Math.max(1, day.arrivals.length / Math.max(1, arrivals.length)))) : arrivals.length;
  return { day: day.day, count, arrivals };
}

/** The summary's flows as families: same source, event and user, shapes equal but for a part marker and case. */
export function flowFamilies(summaries: readonly FlowSummary[]): FlowFamily[] {
  const groups = new Map<string, Array<{ flow: FlowSummary; marker: PartMarker | undefined }>>();
  for (const flow of summaries) {
    const marker = partMarker(flow.pieces, flow.runs);
    const key = `${flow.source}\u0000${flow.event}\u0000${flow.user}\u0000${wholeShape(flow, marker).toLowerCase()}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push({ flow, marker });
  }
  const families: FlowFamily[] = [];
  for (const group of groups.values()) {
    if (group.length === 1 && !group[0]?.marker) {
      const flow = (group[0] as { flow: FlowSummary }).flow;
      families.push({ summary: flow, members: [flow], parts: undefined });
      continue;
    }
    group.sort((a, b) => filesOf(b.flow) - filesOf(a.flow));
    const lead = (group.find((m) => !m.marker) ?? group[0]) as { flow: FlowSummary; marker: PartMarker | undefined };
    const inParts = group.filter((m) => m.marker);
    const perDelivery = new Set(
      inParts.map((m) => {
        const countRun = m.marker && m.marker.runs.length === 2 ? m.flow.runs[m.marker.runs[1] as number] : undefined;
        return countRun && !countRun.varies ? Number(countRun.first) : undefined;
      }),
    );
    const parts = inParts.length > 0 ? { perDelivery: perDelivery.size === 1 ? [...perDelivery][0] : undefined, alsoWhole: group.some((m) => !m.marker) } : undefined;
    const days = new Map<string, FlowDay>();
    for (const m of group) {
      for (const d of m.flow.days.values()) {
        const day = m.marker ? deliveries(d, parts?.perDelivery) : { ...d, arrivals: [...d.arrivals] };
        const mine = days.get(d.day);
        if (mine) mergeDay(mine, day);
        else days.set(d.day, day);
      }
    }
    families.push({ summary: { ...lead.flow, days }, members: [lead.flow, ...group.map((m) => m.flow).filter((f) => f !== lead.flow)], parts });
  }
  return families;
}
