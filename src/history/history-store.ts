import { matchesAll, type Matcher } from '../notify/matcher.js';
import type { MovedAside } from './sqlite-file.js';
import { migrateHistory, type HistoryDb, type HistoryTables, type OpenedHistoryDatabase } from './history-database.js';
import type { AlertEventRecord, AttemptRecord, HistoryRecord, OccurrenceRecord, SilenceEventRecord } from './history-records.js';
import { firingsOf, oncallRows, type OncallGrouping, type OncallRow } from './oncall-report.js';
import { SlaLedgerStore } from './sla-ledger-store.js';
import { FlowStore } from './flow-store.js';
import { BackfillSpool } from './backfill-spool.js';
import type { FlowDayRecord } from '../flows/flow-day-record.js';
import { dbText } from './db-text.js';
import { alertEventSchema, attemptSchema, silenceEventSchema } from './history-records.js';

/** A position in a listing, newest first: the last row returned (or scanned). */
export interface HistoryCursor {
  at: number;
  id: string;
}

export interface HistoryQuery {
  /** Alertmanager matchers; all must hold. */
  matchers: Matcher[];
  /** Inclusive range, epoch ms. */
  from: number;
  to: number;
  limit: number;
  cursor?: HistoryCursor | undefined;
  /** Only this alert's records. */
  fingerprint?: string | undefined;
}

export interface HistoryPage<T> {
  items: T[];
  /** Where the next page starts, or null when the range is exhausted. */
  next: HistoryCursor | null;
}

/**
 * Rows read for one page at most, whatever the matchers drop: a page of a rare match in a huge range ends
 * early with a cursor to go on from, instead of reading the whole range (the request stays fast and small).
 */
export const MAX_SCANNED_ROWS = 20_000;
/** Alert events the on-call report reads at most: a year of a busy estate's firings, acks and resolutions. */
export const MAX_ONCALL_EVENTS = 500_000;
/** Rows inserted per statement (PostgreSQL's parameter limit is 65,535; SQLite's 32,766). */
const INSERT_CHUNK = 200;
/** Rows deleted per statement by the retention sweep, so a sweep never holds a long lock. */
const PRUNE_CHUNK = 5_000;

/** A damaged history file found (contract 12a): when, where it went, why, and the backup put in its place. */
export interface HistoryDamage extends MovedAside {
  at: number;
}

/**
 * The history of alerts, notifications and silences in SQL (contract section 12). Records are inserted with
 * their ids and "do nothing" on a conflict, so writing one twice (after a restart, a leader change or a retry)
 * keeps it once. Listings are newest first and paged by (at, id), never loaded whole.
 */
export class HistoryStore {
  readonly db: HistoryDb;
  /** The SLA ledger on the same database (contract section 11). */
  readonly ledger: SlaLedgerStore;
  /** The per-flow daily summary on the same database (contract section 13). */
  readonly flows: FlowStore;
  /** What an SLA backfill read so far, so a stopped one resumes (contract section 11). */
  readonly spool: BackfillSpool;
  private schema: Promise<void> | undefined;

  /** A damaged file found (and replaced), until the daemon repaired what it could (contract 12a). */
  private damageFound: HistoryDamage | undefined;

  constructor(readonly opened: OpenedHistoryDatabase) {
    this.db = opened.db;
    this.ledger = new SlaLedgerStore(opened.db);
    this.flows = new FlowStore(opened.db);
    this.spool = new BackfillSpool(opened.db);
    opened.onDamage?.((d) => {
      this.damageFound = { ...d, at: Date.now() };
    });
  }

  /**
   * The damage found in the SQLite file while it is not repaired: the file moved aside, and the backup restored in its
   * place (or none: a new, empty file). `transfer_watch_history_up` is 0 and TransferWatchHistoryDamaged fires
   * meanwhile; the ledger's reads answer 503 with the reason.
   */
  get damage(): HistoryDamage | undefined {
    return this.damageFound;
  }

  /** Mark damage known from elsewhere (a restore by hand, `history restore`, before this start). */
  damaged(d: HistoryDamage): void {
    this.damageFound = d;
  }

  /** What could be repaired was (the span since the backup re-judged): the store is whole again. */
  repaired(): void {
    this.damageFound = undefined;
  }

  /** `PRAGMA quick_check` (SQLite; nothing to check on PostgreSQL, which keeps its own durability). */
  async integrityCheck(): Promise<string[]> {
    return (await this.opened.integrityCheck?.()) ?? [];
  }

  /** An online backup, verified, the newest `keep` kept (SQLite); undefined on PostgreSQL (pg_dump, PITR: docs/history.md). */
  async backup(at: number, keep: number): Promise<{ file: string; bytes: number } | undefined> {
    await this.ensureSchema();
    return this.opened.backup?.(at, keep);
  }

  /**
   * Bring the tables up to date, once per process; a database that is down at start is migrated when it
   * answers (the daemon starts and alerts without it).
   */
  ensureSchema(): Promise<void> {
    this.schema ??= migrateHistory(this.db).catch((err: unknown) => {
      this.schema = undefined;
      throw err;
    });
    return this.schema;
  }

  redact(message: string): string {
    return this.opened.redact(message);
  }

  /** Write records; each kind in chunked multi-row inserts inside one transaction. */
  async write(records: readonly HistoryRecord[]): Promise<void> {
    if (records.length === 0) return;
    // A SQLite file deleted or replaced while open would take writes that nobody reads again: the one at its path is
    // opened instead, its tables made, and the records written there.
    await this.checkFile();
    const alerts = records.filter((r): r is AlertEventRecord => r.kind === 'alert');
    const attempts = records.filter((r): r is AttemptRecord => r.kind === 'attempt');
    const silences = records.filter((r): r is SilenceEventRecord => r.kind === 'silence');
    const occurrences = records.filter((r): r is OccurrenceRecord => r.kind === 'occurrence');
    const flowDays = records.filter((r): r is FlowDayRecord => r.kind === 'flow_day');
    await this.db.transaction().execute(async (tx) => {
      await SlaLedgerStore.write(tx, occurrences);
      await FlowStore.write(tx, flowDays);
      for (const chunk of chunks(alerts)) {
        await tx
          .insertInto('alert_events')
          .values(chunk.map(alertRow))
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
      }
      for (const chunk of chunks(attempts)) {
        // An interrupted attempt's record (written after a crash) is never replaced; anything else is kept once.
        await tx
          .insertInto('notification_attempts')
          .values(chunk.map(attemptRow))
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        const links = chunk.flatMap((a) => [...new Set(a.fingerprints)].map((fingerprint) => ({ attempt_id: a.id, fingerprint, at: a.at })));
        for (const part of chunks(links)) {
          await tx
            .insertInto('attempt_alerts')
            .values(part)
            .onConflict((oc) => oc.columns(['attempt_id', 'fingerprint']).doNothing())
            .execute();
        }
      }
      for (const chunk of chunks(silences)) {
        await tx
          .insertInto('silence_events')
          .values(chunk.map(silenceRow))
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
      }
    });
  }

  /** Alert events, newest first. An `alertname="X"` matcher narrows the query in SQL (by index). */
  async alertEvents(q: HistoryQuery): Promise<HistoryPage<AlertEventRecord>> {
    const alertname = q.matchers.find((m) => m.name === 'alertname' && m.type === '=')?.value;
    return this.page(q, (after, limit) => {
      let query = this.db.selectFrom('alert_events').selectAll().where('at', '>=', q.from).where('at', '<=', q.to);
      if (alertname !== undefined) query = query.where('alertname', '=', alertname);
      if (q.fingerprint !== undefined) query = query.where('fingerprint', '=', q.fingerprint);
      if (after) query = query.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
      return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    }, (row) => {
      const { detail, ...rest } = row;
      const record = alertEventSchema.parse({ kind: 'alert', ...rest, at: Number(row.at), labels: JSON.parse(row.labels), annotations: JSON.parse(row.annotations), ...(detail ? { detail: JSON.parse(detail) } : {}) });
      return matchesAll(q.matchers, record.labels) ? record : undefined;
    });
  }

  /**
   * Notification attempts, newest first. Matchers apply to the label set of each alert an attempt carried,
   * together with `receiver`, `integration`, `status` and `outcome`: an attempt matches when one of its alerts does.
   */
  async attempts(q: HistoryQuery): Promise<HistoryPage<AttemptRecord>> {
    const receiver = q.matchers.find((m) => m.name === 'receiver' && m.type === '=')?.value;
    const fingerprint = q.fingerprint;
    return this.page(q, (after, limit) => {
      if (fingerprint !== undefined) {
        // One alert's attempts: walked along its links (fingerprint, at, attempt_id), newest first, by index.
        let query = this.db
          .selectFrom('attempt_alerts as aa')
          .innerJoin('notification_attempts as na', 'na.id', 'aa.attempt_id')
          .selectAll('na')
          .where('aa.fingerprint', '=', fingerprint)
          .where('aa.at', '>=', q.from)
          .where('aa.at', '<=', q.to);
        if (receiver !== undefined) query = query.where('na.receiver', '=', receiver);
        if (after) query = query.where((eb) => eb.or([eb('aa.at', '<', after.at), eb.and([eb('aa.at', '=', after.at), eb('aa.attempt_id', '<', after.id)])]));
        return query.orderBy('aa.at', 'desc').orderBy('aa.attempt_id', 'desc').limit(limit).execute();
      }
      let query = this.db.selectFrom('notification_attempts').selectAll().where('at', '>=', q.from).where('at', '<=', q.to);
      if (receiver !== undefined) query = query.where('receiver', '=', receiver);
      if (after) query = query.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
      return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    }, (row) => {
      const record = attemptSchema.parse({
        kind: 'attempt',
        ...row,
        at: Number(row.at),
        attempt: Number(row.attempt),
        duration_ms: Number(row.duration_ms),
        fingerprints: JSON.parse(row.fingerprints),
        alerts: JSON.parse(row.alerts),
      });
      return attemptMatches(record, q.matchers) ? record : undefined;
    });
  }

  /**
   * How fast people respond (contract 14): the firings that began in [from, to] with their acknowledgement,
   * escalation and resolution (read until now), grouped by `by`. At most MAX_ONCALL_EVENTS events are read (a span
   * of more says `truncated`).
   */
  async oncall(q: { from: number; to: number; by: OncallGrouping }): Promise<{ rows: OncallRow[]; truncated: boolean }> {
    await this.checkFile();
    const rows = await this.db
      .selectFrom('alert_events')
      .select(['fingerprint', 'at', 'event', 'labels'])
      .where('at', '>=', q.from)
      .where('event', 'in', ['firing', 'acknowledged', 'escalated', 'resolved'])
      .orderBy('at')
      .limit(MAX_ONCALL_EVENTS + 1)
      .execute();
    const truncated = rows.length > MAX_ONCALL_EVENTS;
    const events = rows.slice(0, MAX_ONCALL_EVENTS).map((r) => ({ fingerprint: r.fingerprint, at: Number(r.at), event: r.event, labels: JSON.parse(r.labels) as Record<string, string> }));
    const firings = firingsOf(events, q.from, q.to);
    const receivers = new Map<string, string[]>();
    if (q.by === 'receiver' && firings.length > 0) {
      // The receivers told of each alert by its route (an escalation's receiver is told later, and is not who answers).
      const told = await this.db
        .selectFrom('attempt_alerts as aa')
        .innerJoin('notification_attempts as na', 'na.id', 'aa.attempt_id')
        .select(['aa.fingerprint', 'na.receiver'])
        .where('aa.at', '>=', q.from)
        .where('na.status', '=', 'firing')
        .where('na.title', 'not like', '[ESCALATION%')
        .groupBy(['aa.fingerprint', 'na.receiver'])
        .execute();
      for (const t of told) receivers.set(t.fingerprint, [...(receivers.get(t.fingerprint) ?? []), t.receiver]);
    }
    return { rows: oncallRows(firings, q.by, receivers), truncated };
  }

  /** Silence events, newest first; matchers apply to `silence_id`, `event` and `created_by`. */
  async silenceEvents(q: HistoryQuery): Promise<HistoryPage<SilenceEventRecord>> {
    return this.page(q, (after, limit) => {
      let query = this.db.selectFrom('silence_events').selectAll().where('at', '>=', q.from).where('at', '<=', q.to);
      if (after) query = query.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
      return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    }, (row) => {
      const record = silenceEventSchema.parse({
        kind: 'silence',
        ...row,
        at: Number(row.at),
        starts_at: Number(row.starts_at),
        ends_at: Number(row.ends_at),
        matchers: JSON.parse(row.matchers),
      });
      return matchesAll(q.matchers, { silence_id: record.silence_id, event: record.event, created_by: record.created_by }) ? record : undefined;
    });
  }

  /** Delete what is older than `before`; returns how many rows went. */
  async prune(before: number): Promise<number> {
    let total = await this.flows.prune(new Date(before).toISOString().slice(0, 10));
    for (;;) {
      const result = await this.db
        .deleteFrom('sla_occurrences')
        .where('id', 'in', (sub) => sub.selectFrom('sla_occurrences').select('id').where('deadline', '<', before).limit(PRUNE_CHUNK))
        .executeTakeFirst();
      const n = Number(result.numDeletedRows);
      total += n;
      if (n < PRUNE_CHUNK) break;
    }
    for (const table of ['alert_events', 'notification_attempts', 'attempt_alerts', 'silence_events'] as const) {
      for (;;) {
        const result =
          table === 'attempt_alerts'
            ? await this.db
                .deleteFrom('attempt_alerts')
                .where('at', '<', before)
                .where('attempt_id', 'in', (sub) => sub.selectFrom('attempt_alerts').select('attempt_id').where('at', '<', before).limit(PRUNE_CHUNK))
                .executeTakeFirst()
            : await this.db
                .deleteFrom(table)
                .where('id', 'in', (sub) => sub.selectFrom(table).select('id').where('at', '<', before).limit(PRUNE_CHUNK))
                .executeTakeFirst();
        const n = Number(result.numDeletedRows);
        total += n;
        if (n < PRUNE_CHUNK) break;
      }
    }
    return total;
  }

  /** A cheap round trip: does the database answer? */
  async ping(): Promise<void> {
    await this.checkFile();
    await this.db.selectFrom('alert_events').select('id').limit(1).execute();
  }

  close(): Promise<void> {
    return this.opened.close();
  }

  private async checkFile(): Promise<void> {
    if ((await this.opened.check?.()) !== 'reopened') return;
    this.schema = undefined;
    await this.ensureSchema();
  }

  /** Read rows in chunks after the cursor, keep those `keep` accepts, stop at `limit` kept or MAX_SCANNED_ROWS read. */
  private async page<Row extends { at: number | string; id: string }, T extends { at: number; id: string }>(
    q: HistoryQuery,
    read: (after: HistoryCursor | undefined, limit: number) => Promise<Row[]>,
    keep: (row: Row) => T | undefined,
  ): Promise<HistoryPage<T>> {
    await this.ensureSchema();
    const items: T[] = [];
    let after = q.cursor;
    let scanned = 0;
    const chunk = Math.min(1_000, Math.max(q.limit + 1, 100));
    for (;;) {
      const rows = await read(after, chunk);
      for (const row of rows) {
        scanned++;
        after = { at: Number(row.at), id: row.id };
        const item = keep(row);
        if (item === undefined) continue;
        items.push(item);
        if (items.length === q.limit) {
          // A full page: the next one starts after its last item (it may turn out empty).
          return { items, next: { at: item.at, id: item.id } };
        }
      }
      if (rows.length < chunk) return { items, next: null };
      if (scanned >= MAX_SCANNED_ROWS) return { items, next: after ?? null };
    }
  }
}

function attemptMatches(record: AttemptRecord, matchers: readonly Matcher[]): boolean {
  if (matchers.length === 0) return true;
  const own: Record<string, string> = { receiver: record.receiver, integration: record.integration, status: record.status, outcome: record.outcome };
  const sets = record.alerts.length > 0 ? record.alerts : [{}];
  return sets.some((labels) => matchesAll(matchers, { ...labels, ...own }));
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += INSERT_CHUNK) out.push(items.slice(i, i + INSERT_CHUNK));
  return out;
}

function alertRow(r: AlertEventRecord): HistoryTables['alert_events'] {
  return {
    id: dbText(r.id),
    at: r.at,
    event: r.event,
    fingerprint: r.fingerprint,
    alertname: dbText(r.labels['alertname'] ?? ''),
    labels: JSON.stringify(r.labels),
    annotations: JSON.stringify(r.annotations),
    silence_id: r.silence_id === null ? null : dbText(r.silence_id),
    inhibited_by: r.inhibited_by,
    detail: r.detail ? dbText(JSON.stringify(r.detail)) : null,
  };
}

function attemptRow(r: AttemptRecord): HistoryTables['notification_attempts'] {
  return {
    id: r.id,
    at: r.at,
    receiver: r.receiver,
    integration: r.integration,
    status: r.status,
    fingerprints: JSON.stringify(r.fingerprints),
    alerts: JSON.stringify(r.alerts),
    title: dbText(r.title),
    outcome: r.outcome,
    attempt: r.attempt,
    error: r.error === null ? null : dbText(r.error),
    duration_ms: Math.round(r.duration_ms),
    about: r.about ?? 'alerts',
    period: r.period ?? null,
  };
}

function silenceRow(r: SilenceEventRecord): HistoryTables['silence_events'] {
  return {
    id: r.id,
    at: r.at,
    event: r.event,
    silence_id: dbText(r.silence_id),
    matchers: JSON.stringify(r.matchers),
    created_by: dbText(r.created_by),
    comment: dbText(r.comment),
    starts_at: r.starts_at,
    ends_at: r.ends_at,
  };
}
