import { randomUUID } from 'node:crypto';
import { sql, type JoinBuilder } from 'kysely';
import type { OccurrenceRecord } from '../sla/occurrence.js';
import type { SlaTally } from '../sla/sla-report.js';
import type { HistoryDb, HistoryTables } from './history-database.js';
import { dbText } from './db-text.js';
import { mapInSlices } from '../util/in-slices.js';

/** An occurrence as the API shows it: what happened, and the excuse beside it if there is one. */
export interface LedgerOccurrence {
  rule: string;
  key: Record<string, string>;
  keyText: string;
  localDate: string;
  deadline: number;
  timezone: string;
  outcome: OccurrenceRecord['outcome'];
  final: boolean;
  arrivedAt: number | null;
  latenessSeconds: number | null;
  count: number;
  minCount: number;
  files: OccurrenceRecord['files'];
  /** Matching files after the occurrence closed, until the next deadline (evidence that changes no outcome). */
  afterClose: OccurrenceRecord['after_close'];
  excuse: { by: string; at: number; reason: string } | null;
}

export interface Excuse {
  rule: string;
  keyText: string;
  /** The key's labels (kept with the audit event). */
  key?: Record<string, string>;
  localDate: string;
  /** One deadline of the day (epoch ms); absent: every deadline of the local date. */
  deadline?: number | undefined;
  by: string;
  at: number;
  reason: string;
}

/** An excuse given or withdrawn (contract section 11a): the audit trail, kept in the history. */
export interface ExcuseEvent {
  id: string;
  at: number;
  event: (typeof EVENT_KINDS)[number];
  /** A re-judged span's (contract 11c): its local dates and how many occurrences it judged and changed. */
  detail?: RejudgeDetail;
  rule: string;
  key: Record<string, string>;
  localDate: string;
  deadline: number | null;
  by: string;
  reason: string;
}

const EVENT_KINDS = ['excused', 'withdrawn', 'rejudged', 'backfilled'] as const;

/** What `sla rejudge` did (contract 11c), kept with its event. */
export interface RejudgeDetail {
  from: string;
  to: string;
  judged: number;
  changed: number;
}

/** One occurrence a re-judgement changed: its outcome before (null: the ledger had none) and after. */
export interface RejudgedChange {
  rule: string;
  key: Record<string, string>;
  localDate: string;
  deadline: number;
  timezone: string;
  was: string | null;
  now: string;
}

/**
 * An occurrence's excuse: its own deadline's, or its local date's as a whole (deadline 0) — which excuses only the
 * deadlines of the day that were not on time (contract 11c: an excuse never takes a met deadline out of the count).
 */
function excuseOf(j: JoinBuilder<HistoryTables & { o: HistoryTables['sla_occurrences'] } & { e: HistoryTables['sla_occurrence_excuses'] }, 'o' | 'e'>) {
  return j
    .onRef('e.rule', '=', 'o.rule')
    .onRef('e.key_text', '=', 'o.key_text')
    .onRef('e.local_date', '=', 'o.local_date')
    .on((eb) => eb.or([eb.and([eb('e.deadline', '=', 0), eb('o.outcome', '<>', 'on_time')]), eb('e.deadline', '=', eb.ref('o.deadline'))]));
}

/** Per rule and key over a range of local dates: how many of each outcome, and the lateness of the late ones. */
export interface LedgerTally extends SlaTally {
  keyText: string;
}

/** Rows read per page of occurrences at most; a longer range is paged (`next`). */
export const MAX_OCCURRENCES_PAGE = 5_000;

/**
 * The SLA ledger in SQL (contract section 11): occurrences upserted by id (a final one is never changed, except
 * `no_data` once the history could be read after all), excuses beside them, and the report's tallies.
 */
export class SlaLedgerStore {
  constructor(private readonly db: HistoryDb) {}

  /** Upsert occurrences inside the caller's transaction (HistoryStore.write). */
  static async write(tx: HistoryDb, records: readonly OccurrenceRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 100) {
      const rows = records.slice(i, i + 100).map(row);
      // A final occurrence keeps its outcome (except no_data, once the history could be read); its files after the
      // close are added to it whatever (evidence, contract section 11a).
      const open = sql<boolean>`(sla_occurrences.final = 0 or sla_occurrences.outcome = 'no_data')`;
      const unlessFinal = <C extends 'outcome' | 'final' | 'arrived_at' | 'lateness_seconds' | 'count' | 'files' | 'closes_at'>(column: C) =>
        sql<HistoryTables['sla_occurrences'][C]>`case when ${open} then ${sql.ref(`excluded.${column}`)} else ${sql.ref(`sla_occurrences.${column}`)} end`;
      await tx
        .insertInto('sla_occurrences')
        .values(rows)
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            outcome: unlessFinal('outcome'),
            final: unlessFinal('final'),
            arrived_at: unlessFinal('arrived_at'),
            lateness_seconds: unlessFinal('lateness_seconds'),
            count: unlessFinal('count'),
            files: unlessFinal('files'),
            closes_at: unlessFinal('closes_at'),
            after_close: sql.ref('excluded.after_close'),
          }),
        )
        .execute();
    }
  }

  /**
   * A rule's judged occurrences (final on_time, late or missing) with deadlines from `since`, newest first, at most
   * `limit`: what `warn_before: auto` learns each key's usual arrival from.
   */
  async recentJudged(rule: string, since: number, limit: number): Promise<Array<{ keyText: string; deadline: number; arrivedAt: number | null }>> {
    const rows = await this.db
      .selectFrom('sla_occurrences')
      .select(['key_text', 'deadline', 'arrived_at'])
      .where('rule', '=', rule)
      .where('deadline', '>=', since)
      .where('final', '=', 1)
      .where('outcome', 'in', ['on_time', 'late', 'missing'])
      .orderBy('deadline', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ keyText: r.key_text, deadline: Number(r.deadline), arrivedAt: r.arrived_at === null ? null : Number(r.arrived_at) }));
  }

  /**
   * Occurrences whose local date is in [from, to] (each in its rule's zone), ordered by deadline, rule, key;
   * `outcome: 'excused'` selects excused ones, another outcome those not excused with it. `withoutFiles`: each
   * one's matching files are not read (`files` is empty; `count` still says how many came) — the month grid's
   * marks need none, and they were most of what a month's read held.
   */
  async occurrences(q: { from: string; to: string; rule?: string | undefined; outcome?: string | undefined; limit: number; offset: number; withoutFiles?: boolean }): Promise<LedgerOccurrence[]> {
    const columns = ['rule', 'key', 'key_text', 'local_date', 'deadline', 'timezone', 'outcome', 'final', 'arrived_at', 'lateness_seconds', 'count', 'min_count', 'after_close'] as const;
    let query = this.db
      .selectFrom('sla_occurrences as o')
      .leftJoin('sla_occurrence_excuses as e', excuseOf)
      .select(columns.map((c) => `o.${c}` as const))
      .select((eb) => (q.withoutFiles ? eb.val('[]').as('files') : eb.ref('o.files').as('files')))
      .select(['e.by as excuse_by', 'e.at as excuse_at', 'e.reason as excuse_reason'])
      .where('o.local_date', '>=', q.from)
      .where('o.local_date', '<=', q.to);
    if (q.rule !== undefined) query = query.where('o.rule', '=', q.rule);
    if (q.outcome === 'excused') query = query.where('e.by', 'is not', null);
    else if (q.outcome !== undefined) query = query.where('o.outcome', '=', q.outcome).where('e.by', 'is', null);
    const rows = await query.orderBy('o.deadline').orderBy('o.rule').orderBy('o.key_text').limit(q.limit).offset(q.offset).execute();
    // Read a slice at a time (the files of 5,000 rows are 5,000 JSON texts to parse).
    return mapInSlices(rows, (r) => ({
      rule: r.rule,
      key: JSON.parse(r.key) as Record<string, string>,
      keyText: r.key_text,
      localDate: r.local_date,
      deadline: Number(r.deadline),
      timezone: r.timezone,
      outcome: r.outcome as OccurrenceRecord['outcome'],
      final: Number(r.final) === 1,
      arrivedAt: r.arrived_at === null ? null : Number(r.arrived_at),
      latenessSeconds: r.lateness_seconds === null ? null : Number(r.lateness_seconds),
      count: Number(r.count),
      minCount: Number(r.min_count),
      files: JSON.parse(r.files) as OccurrenceRecord['files'],
      afterClose: JSON.parse(r.after_close ?? '[]') as OccurrenceRecord['after_close'],
      excuse: r.excuse_by === null || r.excuse_by === undefined ? null : { by: r.excuse_by, at: Number(r.excuse_at), reason: r.excuse_reason ?? '' },
    }));
  }

  /**
   * Outcome counts per rule and key over [from, to] (local dates), from SQL aggregates; lateness of the late ones.
   * `everyKnownKey`: a key judged before the period and not in it has its (all zero) row too, with since when it is
   * judged (the `/sla` grid on a month's first day, before its first deadline).
   */
  async tally(q: { from: string; to: string; rule?: string | undefined; everyKnownKey?: boolean }): Promise<LedgerTally[]> {
    let counts = this.db
      .selectFrom('sla_occurrences as o')
      .leftJoin('sla_occurrence_excuses as e', excuseOf)
      .select(['o.rule', 'o.key_text', 'o.outcome'])
      .select((eb) => [
        eb.fn.count<string>('o.id').as('n'),
        eb.fn.max('o.key').as('key'),
        eb.fn.max('o.timezone').as('timezone'),
        sql<number>`case when ${eb.ref('e.by')} is null then 0 else 1 end`.as('excused'),
      ])
      .where('o.local_date', '>=', q.from)
      .where('o.local_date', '<=', q.to);
    if (q.rule !== undefined) counts = counts.where('o.rule', '=', q.rule);
    const rows = await counts.groupBy(['o.rule', 'o.key_text', 'o.outcome', sql`case when e.by is null then 0 else 1 end`]).execute();
    let late = this.db
      .selectFrom('sla_occurrences as o')
      .leftJoin('sla_occurrence_excuses as e', excuseOf)
      .select(['o.rule', 'o.key_text', 'o.lateness_seconds'])
      .where('o.outcome', '=', 'late')
      .where('e.by', 'is', null)
      .where('o.local_date', '>=', q.from)
      .where('o.local_date', '<=', q.to);
    if (q.rule !== undefined) late = late.where('o.rule', '=', q.rule);
    const lateness = await late.execute();
    // Since when each rule and key is judged (over the whole ledger): a period before it is not covered.
    let firsts = this.db
      .selectFrom('sla_occurrences')
      .select(['rule', 'key_text'])
      .select((eb) => [eb.fn.min('local_date').as('first'), eb.fn.max('key').as('key'), eb.fn.max('timezone').as('timezone')])
      .groupBy(['rule', 'key_text']);
    if (q.rule !== undefined) firsts = firsts.where('rule', '=', q.rule);
    const monitored = await firsts.execute();
    const out = new Map<string, LedgerTally>();
    const at = (rule: string, keyText: string, key: string, timezone: string): LedgerTally => {
      const id = `${rule}\u0000${keyText}`;
      let t = out.get(id);
      if (!t) out.set(id, (t = { rule, keyText, key: JSON.parse(key) as Record<string, string>, timezone, on_time: 0, late: 0, missing: 0, excused: 0, no_data: 0, latenessSeconds: [] }));
      return t;
    };
    for (const r of rows) {
      const t = at(r.rule, r.key_text, String(r.key), String(r.timezone));
      const n = Number(r.n);
      if (Number(r.excused) === 1) t.excused += n;
      else if (r.outcome === 'on_time' || r.outcome === 'late' || r.outcome === 'missing' || r.outcome === 'no_data') t[r.outcome] += n;
    }
    for (const r of lateness) {
      const t = out.get(`${r.rule}\u0000${r.key_text}`);
      if (t && r.lateness_seconds !== null) t.latenessSeconds.push(Number(r.lateness_seconds));
    }
    // A key judged in the period says since when; a period wholly before a key's first judged deadline has its row
    // too (all zero: not monitored yet). A rule removed since has none for the periods after it.
    for (const m of monitored) {
      const first = String(m.first);
      if (first <= q.to && !q.everyKnownKey && !out.has(`${m.rule}\u0000${m.key_text}`)) continue;
      at(m.rule, m.key_text, String(m.key), String(m.timezone)).monitoredFrom = first;
    }
    return [...out.values()].sort((a, b) => a.rule.localeCompare(b.rule) || a.keyText.localeCompare(b.keyText));
  }

  /**
   * Record an excuse (replacing one of the same occurrence) and its audit event. A whole day's excuse replaces its
   * deadlines' own; a deadline cannot be excused apart from a day excused as a whole (ExcuseConflict).
   */
  async excuse(e: Excuse): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const mine = tx.selectFrom('sla_occurrence_excuses').select('deadline').where('rule', '=', e.rule).where('key_text', '=', e.keyText).where('local_date', '=', e.localDate);
      if (e.deadline !== undefined) {
        if ((await mine.where('deadline', '=', 0).executeTakeFirst()) !== undefined) throw new ExcuseConflict(`${e.localDate} is excused as a whole day: withdraw that excuse first`);
      } else {
        await tx.deleteFrom('sla_occurrence_excuses').where('rule', '=', e.rule).where('key_text', '=', e.keyText).where('local_date', '=', e.localDate).where('deadline', '<>', 0).execute();
      }
      const deadline = e.deadline ?? 0;
      await tx
        .insertInto('sla_occurrence_excuses')
        .values({ rule: e.rule, key_text: e.keyText, local_date: e.localDate, deadline, by: dbText(e.by), at: e.at, reason: dbText(e.reason) })
        .onConflict((oc) => oc.columns(['rule', 'key_text', 'local_date', 'deadline']).doUpdateSet({ by: dbText(e.by), at: e.at, reason: dbText(e.reason) }))
        .execute();
      await tx.insertInto('sla_excuse_events').values(eventRow('excused', e)).execute();
    });
  }

  /**
   * Re-decide occurrences from the service's history (`sla rejudge`, contract 11c): each replaces the ledger's of its
   * id whatever it was, final or not (excuses are kept beside them, untouched), and the event is recorded, in one
   * transaction. Returns the occurrences whose outcome, arrival or count changed.
   */
  async rejudge(records: readonly OccurrenceRecord[], event: { at: number; by: string; reason: string; rule: string | undefined; from: string; to: string }): Promise<RejudgedChange[]> {
    return this.db.transaction().execute(async (tx) => {
      const changed: RejudgedChange[] = [];
      for (let i = 0; i < records.length; i += 200) {
        const slice = records.slice(i, i + 200);
        const before = await tx
          .selectFrom('sla_occurrences')
          .select(['id', 'outcome', 'arrived_at', 'count'])
          .where('id', 'in', slice.map((r) => dbText(r.id)))
          .execute();
        const old = new Map(before.map((b) => [b.id, b]));
        for (const r of slice) {
          const was = old.get(dbText(r.id));
          const same = was !== undefined && was.outcome === r.outcome && (was.arrived_at === null ? null : Number(was.arrived_at)) === r.arrived_at && Number(was.count) === r.count;
          if (!same) changed.push({ rule: r.rule, key: r.key, localDate: r.local_date, deadline: r.deadline, timezone: r.timezone, was: was?.outcome ?? null, now: r.outcome });
        }
        await tx
          .insertInto('sla_occurrences')
          .values(slice.map(row))
          .onConflict((oc) =>
            oc.column('id').doUpdateSet({
              outcome: sql.ref('excluded.outcome'),
              final: sql.ref('excluded.final'),
              arrived_at: sql.ref('excluded.arrived_at'),
              lateness_seconds: sql.ref('excluded.lateness_seconds'),
              count: sql.ref('excluded.count'),
              files: sql.ref('excluded.files'),
              closes_at: sql.ref('excluded.closes_at'),
              after_close: sql.ref('excluded.after_close'),
            }),
          )
          .execute();
      }
      const detail: RejudgeDetail = { from: event.from, to: event.to, judged: records.length, changed: changed.length };
      await tx
        .insertInto('sla_excuse_events')
        .values({ ...eventRow('rejudged', { rule: event.rule ?? '', keyText: '', key: {}, localDate: event.from, by: event.by, at: event.at, reason: event.reason }), detail: JSON.stringify(detail) })
        .execute();
      return changed;
    });
  }

  /**
   * The occurrences of a source window read at last (contract 12a): each replaces the ledger's of its id only where
   * that one is `no_data`, and when any did, an event (`backfilled`) is recorded, in one transaction. Returns how many
   * replaced a no_data.
   */
  async replaceNoData(records: readonly OccurrenceRecord[], event: { at: number; reason: string }): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      let replaced = 0;
      let from = '9999-12-31';
      let to = '0000-01-01';
      for (let i = 0; i < records.length; i += 200) {
        const slice = records.slice(i, i + 200);
        const open = await tx
          .selectFrom('sla_occurrences')
          .select('id')
          .where('id', 'in', slice.map((r) => dbText(r.id)))
          .where('outcome', '=', 'no_data')
          .execute();
        const ids = new Set(open.map((r) => r.id));
        const rows = slice.filter((r) => ids.has(dbText(r.id)));
        if (rows.length === 0) continue;
        replaced += rows.length;
        for (const r of rows) {
          if (r.local_date < from) from = r.local_date;
          if (r.local_date > to) to = r.local_date;
        }
        await SlaLedgerStore.write(tx, rows);
      }
      if (replaced > 0) {
        const detail: RejudgeDetail = { from, to, judged: records.length, changed: replaced };
        await tx
          .insertInto('sla_excuse_events')
          .values({ ...eventRow('backfilled', { rule: '', keyText: '', key: {}, localDate: from, by: 'transfer-watch', at: event.at, reason: event.reason }), detail: JSON.stringify(detail) })
          .execute();
      }
      return replaced;
    });
  }

  /** Withdraw an excuse (a deadline's, or the whole day's) and record who did; false when there was none. */
  async withdraw(w: Omit<Excuse, 'reason'> & { reason?: string }): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const r = await tx
        .deleteFrom('sla_occurrence_excuses')
        .where('rule', '=', w.rule)
        .where('key_text', '=', w.keyText)
        .where('local_date', '=', w.localDate)
        .where('deadline', '=', w.deadline ?? 0)
        .executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      await tx.insertInto('sla_excuse_events').values(eventRow('withdrawn', { ...w, reason: w.reason ?? '' })).execute();
      return true;
    });
  }

  /** Excuse events, newest first, in [from, to] (epoch ms), after `cursor`, at most `limit`. */
  async excuseEvents(q: { from: number; to: number; rule?: string | undefined; limit: number; cursor?: { at: number; id: string } | undefined }): Promise<{ items: ExcuseEvent[]; next: { at: number; id: string } | null }> {
    let query = this.db.selectFrom('sla_excuse_events').selectAll().where('at', '>=', q.from).where('at', '<=', q.to);
    if (q.rule !== undefined) query = query.where('rule', '=', q.rule);
    const after = q.cursor;
    if (after) query = query.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
    const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(q.limit + 1).execute();
    const items = rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      at: Number(r.at),
      event: EVENT_KINDS.find((k) => k === r.event) ?? 'excused',
      ...(r.detail ? { detail: JSON.parse(r.detail) as RejudgeDetail } : {}),
      rule: r.rule,
      key: JSON.parse(r.key) as Record<string, string>,
      localDate: r.local_date,
      deadline: r.deadline === null ? null : Number(r.deadline),
      by: r.by,
      reason: r.reason,
    }));
    const last = items[items.length - 1];
    return { items, next: rows.length > q.limit && last ? { at: last.at, id: last.id } : null };
  }

  /** The outcome of one occurrence (rule, key, deadline), or undefined when the ledger has none. */
  async outcomeAt(rule: string, keyText: string, deadline: number): Promise<{ outcome: string; localDate: string } | undefined> {
    const row = await this.db.selectFrom('sla_occurrences').select(['outcome', 'local_date']).where('rule', '=', rule).where('key_text', '=', keyText).where('deadline', '=', deadline).executeTakeFirst();
    return row ? { outcome: row.outcome, localDate: row.local_date } : undefined;
  }

  /** Through when the ledger of a rule was filled from the service's history, or undefined (never). */
  async backfilledThrough(rule: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('sla_backfills').select('through').where('rule', '=', rule).executeTakeFirst();
    return row === undefined ? undefined : Number(row.through);
  }

  /**
   * Per rule, the latest deadline the ledger holds since `since` (epoch ms): where the process before this one stopped
   * judging, the start of the seam a new process fills (contract section 11b). A rule without one since then has none.
   */
  async lastDeadlines(since: number): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('sla_occurrences')
      .select('rule')
      .select((eb) => eb.fn.max('deadline').as('last'))
      .where('deadline', '>=', since)
      .groupBy('rule')
      .execute();
    return new Map(rows.map((r) => [r.rule, Number(r.last)]));
  }

  async markBackfilled(rule: string, from: number, through: number, at: number): Promise<void> {
    await this.db
      .insertInto('sla_backfills')
      .values({ rule, from_at: from, through, at })
      .onConflict((oc) => oc.column('rule').doUpdateSet({ from_at: from, through, at }))
      .execute();
  }

  /** Whether an occurrence exists (an excuse names one that does). */
  async exists(rule: string, keyText: string, localDate: string): Promise<boolean> {
    return (await this.outcomesOn(rule, keyText, localDate)).length > 0;
  }

  /** A key's occurrences on a local date (one per deadline of that day), in deadline order; none when there is none. */
  async outcomesOn(rule: string, keyText: string, localDate: string): Promise<Array<{ deadline: number; timezone: string; outcome: string }>> {
    const rows = await this.db
      .selectFrom('sla_occurrences')
      .select(['deadline', 'timezone', 'outcome'])
      .where('rule', '=', rule)
      .where('key_text', '=', keyText)
      .where('local_date', '=', localDate)
      .orderBy('deadline')
      .limit(1_000)
      .execute();
    return rows.map((r) => ({ deadline: Number(r.deadline), timezone: r.timezone, outcome: r.outcome }));
  }
}

/** A deadline that cannot be excused apart from its day (excused as a whole): a 409 to the client. */
export class ExcuseConflict extends Error {}

/** Events of one instant keep the order they were made in: the listing is newest first by (at, id). */
let eventSeq = 0;

function eventRow(event: ExcuseEvent['event'], e: Excuse): HistoryTables['sla_excuse_events'] {
  eventSeq = (eventSeq + 1) % 1_000_000;
  return {
    id: `${String(e.at).padStart(15, '0')}-${String(eventSeq).padStart(6, '0')}-${randomUUID().slice(0, 8)}`,
    at: e.at,
    event,
    rule: dbText(e.rule),
    key_text: dbText(e.keyText),
    key: JSON.stringify(e.key ?? {}),
    local_date: e.localDate,
    deadline: e.deadline ?? null,
    by: dbText(e.by),
    reason: dbText(e.reason),
    detail: null,
  };
}

function row(r: OccurrenceRecord): HistoryTables['sla_occurrences'] {
  return {
    id: dbText(r.id),
    rule: r.rule,
    key_text: dbText(r.key_text),
    key: JSON.stringify(r.key),
    local_date: r.local_date,
    deadline: r.deadline,
    timezone: r.timezone,
    outcome: r.outcome,
    final: r.final ? 1 : 0,
    arrived_at: r.arrived_at,
    lateness_seconds: r.lateness_seconds,
    count: r.count,
    min_count: r.min_count,
    files: JSON.stringify(r.files),
    closes_at: r.closes_at,
    after_close: JSON.stringify(r.after_close),
  };
}
