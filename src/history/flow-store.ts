import { ARRIVALS_KEPT_PER_DAY, FlowSummaries, type FlowSummary } from '../flows/flow-summary.js';
import { flowDaySchema, summaryOfRecord, type FlowDayRecord } from '../flows/flow-day-record.js';
import { mergeRunSummaries } from '../flows/name-shape.js';
import type { HistoryDb, HistoryTables } from './history-database.js';
import { dbText } from './db-text.js';

/** Rows merged per statement. */
const CHUNK = 100;
/** Rows deleted per statement by retention. */
const PRUNE_CHUNK = 5_000;

type FlowDayRow = HistoryTables['flow_days'];

function rowOf(r: FlowDayRecord): FlowDayRow {
  return {
    flow_id: r.flow_id,
    day: r.day,
    source: dbText(r.source),
    event: dbText(r.event),
    user: dbText(r.user),
    pieces: dbText(JSON.stringify(r.pieces)),
    runs: dbText(JSON.stringify(r.runs)),
    sample_file: dbText(r.sample_file),
    sample_instance: dbText(r.sample_instance),
    count: r.count,
    arrivals: JSON.stringify(r.arrivals),
  };
}

function recordOf(row: FlowDayRow): FlowDayRecord | undefined {
  try {
    const parsed = flowDaySchema.safeParse({
      kind: 'flow_day',
      id: `flow:${row.flow_id}:${row.day}`,
      at: Date.parse(`${row.day}T00:00:00Z`),
      flow_id: row.flow_id,
      day: row.day,
      source: row.source,
      event: row.event,
      user: row.user,
      pieces: JSON.parse(row.pieces) as unknown,
      runs: JSON.parse(row.runs) as unknown,
      sample_file: row.sample_file,
      sample_instance: row.sample_instance,
      count: Number(row.count),
      arrivals: JSON.parse(row.arrivals) as unknown,
    });
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Two words on one flow's day as one: the arrivals' union (the first ARRIVALS_KEPT_PER_DAY), exact while the day
 * holds no more; past that the larger count (a day of a flow that busy is traffic, not a deadline).
 */
export function mergeFlowDay(stored: FlowDayRecord, incoming: FlowDayRecord): FlowDayRecord {
  const union = [...new Set([...stored.arrivals, ...incoming.arrivals])].sort((a, b) => a - b);
  const exact = stored.count <= stored.arrivals.length && incoming.count <= incoming.arrivals.length && union.length <= ARRIVALS_KEPT_PER_DAY;
  const runs = stored.runs.map((r) => ({ ...r }));
  mergeRunSummaries(runs, incoming.runs);
  return {
    ...stored,
    runs,
    arrivals: union.slice(0, ARRIVALS_KEPT_PER_DAY),
    count: exact ? union.length : Math.max(stored.count, incoming.count, union.length),
  };
}

/** The flow summary in SQL (contract section 13): one row per flow and UTC day, merged on write. */
export class FlowStore {
  constructor(private readonly db: HistoryDb) {}

  /** Merge flow days inside the caller's transaction (HistoryStore.write). */
  static async write(tx: HistoryDb, records: readonly FlowDayRecord[]): Promise<void> {
    // The same day told twice in one batch is one word first.
    const byId = new Map<string, FlowDayRecord>();
    for (const r of records) {
      const seen = byId.get(r.id);
      byId.set(r.id, seen ? mergeFlowDay(seen, r) : r);
    }
    const all = [...byId.values()];
    for (let i = 0; i < all.length; i += CHUNK) {
      const chunk = all.slice(i, i + CHUNK);
      const stored = await tx
        .selectFrom('flow_days')
        .selectAll()
        .where('flow_id', 'in', [...new Set(chunk.map((r) => r.flow_id))])
        .where('day', 'in', [...new Set(chunk.map((r) => r.day))])
        .execute();
      const existing = new Map<string, FlowDayRecord>();
      for (const row of stored) {
        const r = recordOf(row);
        if (r) existing.set(r.id, r);
      }
      const rows = chunk.map((r) => {
        const old = existing.get(r.id);
        return rowOf(old ? mergeFlowDay(old, r) : r);
      });
      await tx
        .insertInto('flow_days')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['flow_id', 'day']).doUpdateSet((eb) => ({
            runs: eb.ref('excluded.runs'),
            count: eb.ref('excluded.count'),
            arrivals: eb.ref('excluded.arrivals'),
          })),
        )
        .execute();
    }
  }

  /** Every flow's days from `fromDay` (`YYYY-MM-DD`, UTC) on, as summaries; unreadable rows are skipped and counted. */
  async summaries(fromDay: string): Promise<{ flows: FlowSummary[]; unreadable: number }> {
    const rows = await this.db.selectFrom('flow_days').selectAll().where('day', '>=', fromDay).orderBy('flow_id').orderBy('day').execute();
    const summaries = new FlowSummaries();
    let unreadable = 0;
    for (const row of rows) {
      const r = recordOf(row);
      if (r) summaries.merge(summaryOfRecord(r));
      else unreadable++;
    }
    return { flows: summaries.all(), unreadable };
  }

  /** Delete days before `beforeDay`; returns how many rows went. */
  async prune(beforeDay: string): Promise<number> {
    let total = 0;
    for (;;) {
      const old = await this.db.selectFrom('flow_days').select(['flow_id', 'day']).where('day', '<', beforeDay).limit(PRUNE_CHUNK).execute();
      if (old.length === 0) break;
      for (const day of new Set(old.map((r) => r.day))) {
        const result = await this.db.deleteFrom('flow_days').where('day', '=', day).executeTakeFirst();
        total += Number(result.numDeletedRows);
      }
      if (old.length < PRUNE_CHUNK) break;
    }
    return total;
  }
}
