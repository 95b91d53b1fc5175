import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { FlowDay, FlowSummary } from './flow-summary.js';
import { flowKey } from './flow-summary.js';

/**
 * One flow's one UTC day as the history store keeps it (contract section 13): the history journal carries it to
 * the database like every other record, and the database merges it with what it has (arrivals as a union, so the
 * same transfer told twice — a restart, a leader change, the backfill and the live poll over one hour — counts
 * once while a day holds at most ARRIVALS_KEPT_PER_DAY of them).
 */
export const flowDaySchema = z.object({
  kind: z.literal('flow_day'),
  /** `flow:<flow id>:<day>`; the journal replaces a waiting record with the later word on the same day. */
  id: z.string(),
  /** The day's first instant (epoch ms), what the journal and retention order by. */
  at: z.number(),
  flow_id: z.string(),
  day: z.string(),
  source: z.string(),
  event: z.string(),
  user: z.string(),
  pieces: z.array(z.string()),
  runs: z.array(z.object({ first: z.string(), varies: z.boolean(), minLength: z.number(), maxLength: z.number(), dateLike: z.boolean() })),
  sample_file: z.string(),
  sample_instance: z.string(),
  count: z.number().int(),
  arrivals: z.array(z.number()),
});
export type FlowDayRecord = z.infer<typeof flowDaySchema>;

/** A flow's stable id: the same on every replica and across restarts. */
export function flowId(f: Parameters<typeof flowKey>[0]): string {
  return createHash('sha256').update(flowKey(f)).digest('hex').slice(0, 24);
}

export function flowDayRecord(f: FlowSummary, d: FlowDay): FlowDayRecord {
  const id = flowId(f);
  return {
    kind: 'flow_day',
    id: `flow:${id}:${d.day}`,
    at: Date.parse(`${d.day}T00:00:00Z`),
    flow_id: id,
    day: d.day,
    source: f.source,
    event: f.event,
    user: f.user,
    pieces: f.pieces,
    runs: f.runs.map((r) => ({ ...r })),
    sample_file: f.sample.file,
    sample_instance: f.sample.instance,
    count: d.count,
    arrivals: [...d.arrivals],
  };
}

/** The summary of one stored day (to merge into FlowSummaries). */
export function summaryOfRecord(r: FlowDayRecord): FlowSummary {
  return {
    source: r.source,
    event: r.event,
    user: r.user,
    pieces: r.pieces,
    runs: r.runs.map((x) => ({ ...x })),
    sample: { file: r.sample_file, instance: r.sample_instance },
    days: new Map([[r.day, { day: r.day, count: r.count, arrivals: [...r.arrivals] }]]),
  };
}
