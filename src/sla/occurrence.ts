import { z } from 'zod';
import { indexAfter } from '../util/sorted-numbers.js';

/**
 * One expected file at one deadline, for one expected key (contract section 11): how it turned out. Recorded by
 * the leader, kept in the history database; `excused` is not an outcome of its own here but an excuse kept
 * beside it (an operator's word does not change what happened).
 */
export const OCCURRENCE_OUTCOMES = ['on_time', 'late', 'missing', 'no_data'] as const;
export type OccurrenceOutcome = (typeof OCCURRENCE_OUTCOMES)[number];

export const occurrenceSchema = z.object({
  kind: z.literal('occurrence'),
  /** rule, key and deadline: an occurrence is decided (and stored) once, then updated in place. */
  id: z.string(),
  /** The deadline (epoch ms): what retention and the journal order by. */
  at: z.number(),
  rule: z.string(),
  key: z.record(z.string(), z.string()),
  /** `LABEL=VALUE` pairs joined with `,` ('' without for_each). */
  key_text: z.string(),
  local_date: z.string(),
  deadline: z.number(),
  timezone: z.string(),
  outcome: z.enum(OCCURRENCE_OUTCOMES),
  /** No later word can change it (missing becomes late only until the occurrence closes; no_data when the data comes). */
  final: z.boolean(),
  /** The arrival that completed `min_count` (on time or late). */
  arrived_at: z.number().nullable(),
  lateness_seconds: z.number().nullable(),
  count: z.number().int(),
  min_count: z.number().int(),
  /**
   * Evidence: the arrivals that met `min_count`, in order, with when and from which source they came (all that came
   * when fewer did); `count` says how many came. Not every arrival of an on-time window: a rule on a partner that
   * sends thousands of files a day made a row, and a page of the report, of thousands of names.
   */
  files: z.array(z.object({ file: z.string(), at: z.number(), source: z.string() })),
  closes_at: z.number(),
  /**
   * Matching files that arrived after the occurrence closed, until the next deadline (contract section 11a): they
   * do not change the outcome, but a `missing` with a file at 09:00:44 says so. The first AFTER_CLOSE_KEPT of them.
   */
  after_close: z.array(z.object({ file: z.string(), at: z.number(), source: z.string() })).default([]),
});
export type OccurrenceRecord = z.infer<typeof occurrenceSchema>;

/**
 * How much of the history the rule's sources were read over: every success from `from` through `until`, but for
 * the `unread` windows ([start, end], inclusive) — a backfill's that could not be read after every attempt.
 */
export interface ReadSpan {
  from: number;
  until: number;
  unread?: ReadonlyArray<{ start: number; end: number }>;
}

export interface OccurrenceInput {
  deadline: number;
  window: number;
  minCount: number;
  /** When a late file stops counting: the start of the next occurrence's window, or deadline + sla.late_until if sooner (11c). */
  closesAt: number;
  /** Arrival times of this key, sorted. */
  times: readonly number[];
  /** What of the history was read (undefined: nothing). */
  span: ReadSpan | undefined;
  now: number;
}

export interface Judgement {
  outcome: OccurrenceOutcome;
  final: boolean;
  arrivedAt: number | null;
  count: number;
  /**
   * The arrivals that are its evidence (see OccurrenceRecord's `files`), as indexes into `times`: [from, to). The
   * caller looks up their files: an arrival's file is kept only while it can be evidence (MissingFileEvaluator).
   */
  evidence: { from: number; to: number };
}

/**
 * How an occurrence stands given what is known (contract section 11):
 * - `on_time`: `min_count` arrivals in (deadline − window, deadline];
 * - `late`: fewer by the deadline, completed before it closes (the arrival that completed it is kept);
 * - `missing`: not completed; final once the history is read up to the close;
 * - `no_data`: the close has passed and the history is not read up to the deadline, or a window of it was not read
 *   (the service could not be read): never counted against the partner; replaced if the history is read later.
 * Undefined: nothing can be said yet (the deadline is ahead, or the window was not read from its start).
 */
export function judgeOccurrence(o: OccurrenceInput): Judgement | undefined {
  const start = o.deadline - o.window;
  if (o.now < o.deadline) return undefined;
  // A window whose start was never read (a first start, before its backfill or without one) is not judged at all.
  if (o.span === undefined || o.span.from > start) return undefined;
  // Read from its start but not past its deadline by the time it closes, or a window in it could not be read: the
  // source could not be read (no_data, replaced by the real outcome if the history is read later).
  const unread = o.span.unread ?? [];
  if (o.span.until < o.deadline || unread.some((w) => w.start <= o.deadline && w.end > start)) {
    return o.now >= o.closesAt ? { outcome: 'no_data', final: false, arrivedAt: null, count: 0, evidence: { from: 0, to: 0 } } : undefined;
  }
  // Counted by bisection, nothing copied: a window can hold tens of thousands of arrivals, and the two last
  // deadlines of every key are judged at every evaluation.
  const first = indexAfter(o.times, start);
  const inWindow = indexAfter(o.times, o.deadline) - first;
  const completing = first + o.minCount - 1;
  if (inWindow >= o.minCount) {
    return { outcome: 'on_time', final: true, arrivedAt: o.times[completing] ?? null, count: inWindow, evidence: { from: first, to: first + o.minCount } };
  }
  // Late arrivals: (deadline, seenUntil], right after those of the window — the history read without a gap.
  let readUntil = o.span.until;
  for (const w of unread) if (w.end > o.deadline && w.start <= readUntil) readUntil = w.start - 1;
  const seenUntil = Math.min(readUntil, o.closesAt);
  const counted = Math.max(inWindow, indexAfter(o.times, seenUntil) - first);
  if (counted >= o.minCount) {
    return { outcome: 'late', final: true, arrivedAt: o.times[completing] ?? null, count: counted, evidence: { from: first, to: first + o.minCount } };
  }
  return { outcome: 'missing', final: readUntil >= o.closesAt, arrivedAt: null, count: counted, evidence: { from: first, to: first + counted } };
}

/** `LABEL=VALUE,…` of a key, sorted by label. */
export function keyText(key: Record<string, string>): string {
  return Object.keys(key)
    .sort()
    .map((k) => `${k}=${key[k] ?? ''}`)
    .join(',');
}

/**
 * A key from `LABEL=VALUE` pairs (the API's and the page's `key=` parameters, the CLI's `--key`); the first pair that
 * is not one (no label before its `=`) is returned as `malformed`, for the caller's error.
 */
export function keyFromPairs(pairs: readonly string[]): { key: Record<string, string> } | { malformed: string } {
  const key: Record<string, string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    if (i <= 0) return { malformed: pair };
    key[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return { key };
}

/** Fields joined by the unit separator: PostgreSQL text cannot hold NUL, and no rule name or label holds this. */
export function occurrenceId(rule: string, key: string, deadline: number): string {
  return `${rule}\u001f${key}\u001f${deadline}`;
}
