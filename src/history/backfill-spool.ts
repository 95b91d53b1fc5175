import { z } from 'zod';
import type { ServiceRecord } from '../source/transfer.js';
import type { HistoryDb } from './history-database.js';

/**
 * What an SLA backfill reads, fixed at its first start (contract section 11): per source, the span read and the end of
 * each stream of successes (its cursor then). A backfill resumed after a restart or by the next leader reads the same
 * windows, whatever the live cursors did meanwhile, so the windows it kept are the ones it needs.
 */
export const backfillPlanSchema = z
  .object({
    span: z.number().int().positive(),
    sources: z.array(
      z
        .object({
          source: z.string(),
          /** The read's start: `until` − span. */
          from: z.number().int(),
          /** The earliest cursor of the source's successes: the read covers the history up to here. */
          until: z.number().int(),
          streams: z.array(z.object({ id: z.string(), end: z.number().int() }).strict()),
        })
        .strict(),
    ),
  })
  .strict();
export type BackfillPlan = z.infer<typeof backfillPlanSchema>;

/** One source window of a plan as kept: read (with `count` records) or not yet, after `attempts` failed reads. */
export interface SpooledWindow {
  stream: string;
  start: number;
  end: number;
  read: boolean;
  count: number;
  attempts: number;
  error: string | null;
  /** When it was last read or tried (epoch ms). */
  at: number;
}

/** The key of a window in `SpoolOfPlan.windows`. */
export function windowKey(stream: string, start: number): string {
  return `${stream}\u001f${start}`;
}

/**
 * The backfill's progress in the history database (migration 0007): its plan and every source window it read (the
 * records, as the service's fields) or could not read (how often, why). A stopped backfill resumes from it; a window
 * that failed is read again, alone. Emptied when the backfill is done.
 */
export class BackfillSpool {
  constructor(private readonly db: HistoryDb) {}

  /** The plan kept under `id`, if any and readable (an unreadable one is as none: a new plan replaces it). */
  async plan(id: string): Promise<BackfillPlan | undefined> {
    const row = await this.db.selectFrom('backfill_plans').select('plan').where('id', '=', id).executeTakeFirst();
    if (row === undefined) return undefined;
    try {
      const parsed = backfillPlanSchema.safeParse(JSON.parse(row.plan));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Start the plan `id` afresh: the windows of any earlier one under that id are dropped. */
  async begin(id: string, plan: BackfillPlan, at: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('backfill_windows').where('plan_id', '=', id).execute();
      await tx
        .insertInto('backfill_plans')
        .values({ id, plan: JSON.stringify(plan), at })
        .onConflict((oc) => oc.column('id').doUpdateSet({ plan: JSON.stringify(plan), at }))
        .execute();
    });
  }

  /** The plan's windows kept so far, by `windowKey` (without their records). */
  async windows(id: string): Promise<Map<string, SpooledWindow>> {
    const rows = await this.db
      .selectFrom('backfill_windows')
      .select(['stream', 'start_at', 'end_at', 'count', 'attempts', 'error', 'at'])
      .select((eb) => eb('records', 'is not', null).as('read'))
      .where('plan_id', '=', id)
      .execute();
    const windows = new Map<string, SpooledWindow>();
    for (const r of rows) {
      const start = Number(r.start_at);
      windows.set(windowKey(r.stream, start), {
        stream: r.stream,
        start,
        end: Number(r.end_at),
        // SQLite answers 0/1, PostgreSQL a boolean.
        read: Boolean(r.read),
        count: Number(r.count),
        attempts: Number(r.attempts),
        error: r.error,
        at: Number(r.at),
      });
    }
    return windows;
  }

  /** The records of a window read (each to be parsed again as the service's: parse, don't cast), or undefined. */
  async records(id: string, stream: string, start: number): Promise<unknown[] | undefined> {
    const row = await this.db
      .selectFrom('backfill_windows')
      .select('records')
      .where('plan_id', '=', id)
      .where('stream', '=', stream)
      .where('start_at', '=', start)
      .executeTakeFirst();
    if (row?.records == null) return undefined;
    try {
      const parsed: unknown = JSON.parse(row.records);
      return Array.isArray(parsed) ? (parsed as unknown[]) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keep a window read whole. */
  async saveRead(id: string, stream: string, window: { start: number; end: number }, records: readonly ServiceRecord[], attempts: number, at: number): Promise<void> {
    // JSON escapes NUL as \u0000: the text is valid in PostgreSQL whatever a record holds.
    const values = { records: JSON.stringify(records), count: records.length, attempts, error: null, at, end_at: window.end };
    await this.db
      .insertInto('backfill_windows')
      .values({ plan_id: id, stream, start_at: window.start, ...values })
      .onConflict((oc) => oc.columns(['plan_id', 'stream', 'start_at']).doUpdateSet(values))
      .execute();
  }

  /** Count one more failed read of a window, and why. */
  async saveFailure(id: string, stream: string, window: { start: number; end: number }, error: string, attempts: number, at: number): Promise<void> {
    const values = { records: null, count: 0, attempts, error: error.slice(0, 1_000), at, end_at: window.end };
    await this.db
      .insertInto('backfill_windows')
      .values({ plan_id: id, stream, start_at: window.start, ...values })
      .onConflict((oc) => oc.columns(['plan_id', 'stream', 'start_at']).doUpdateSet(values))
      .execute();
  }

  /** Forget one window of a plan (one read again at last, or given up for good). */
  async forget(id: string, stream: string, start: number): Promise<void> {
    await this.db.deleteFrom('backfill_windows').where('plan_id', '=', id).where('stream', '=', stream).where('start_at', '=', start).execute();
  }

  /** Drop plans and their windows: `id`, or (undefined) every plan but those in `keep`. */
  async drop(id: string | undefined, keep: readonly string[] = []): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      let windows = tx.deleteFrom('backfill_windows');
      let plans = tx.deleteFrom('backfill_plans');
      if (id !== undefined) {
        windows = windows.where('plan_id', '=', id);
        plans = plans.where('id', '=', id);
      } else if (keep.length > 0) {
        windows = windows.where('plan_id', 'not in', keep);
        plans = plans.where('id', 'not in', keep);
      }
      await windows.execute();
      const dropped = await plans.executeTakeFirst();
      return Number(dropped.numDeletedRows);
    });
  }
}
