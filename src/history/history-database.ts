import { chmodSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import type { Pool } from 'pg';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { HISTORY_MIGRATIONS } from './history-migrations.js';
import { WorkerSqliteDialect } from './worker-sqlite-dialect.js';
import { backupName, backupsDirOf, listBackups, type MovedAside } from './sqlite-file.js';
import type { HistoryConfig } from './history-schema.js';

/** The tables of the history store; times are epoch milliseconds, JSON columns are text. */
export interface HistoryTables {
  alert_events: {
    id: string;
    at: number;
    event: string;
    fingerprint: string;
    alertname: string;
    labels: string;
    annotations: string;
    silence_id: string | null;
    inhibited_by: string | null;
    /** JSON: an ack's or an escalation's facts (migration 0009). */
    detail: string | null;
  };
  notification_attempts: {
    id: string;
    at: number;
    receiver: string;
    integration: string;
    status: string;
    fingerprints: string;
    alerts: string;
    title: string;
    outcome: string;
    attempt: number;
    error: string | null;
    duration_ms: number;
    /** `alerts` or `sla_report`, and a report's period (migration 0006). */
    about: string;
    period: string | null;
  };
  /** One row per alert a notification attempt carried: "every send attempt of this alert" by index. */
  attempt_alerts: { attempt_id: string; fingerprint: string; at: number };
  silence_events: {
    id: string;
    at: number;
    event: string;
    silence_id: string;
    matchers: string;
    created_by: string;
    comment: string;
    starts_at: number;
    ends_at: number;
  };
  sla_occurrences: {
    id: string;
    rule: string;
    key_text: string;
    key: string;
    local_date: string;
    deadline: number;
    timezone: string;
    outcome: string;
    /** 0 or 1 (SQLite has no boolean). */
    final: number;
    arrived_at: number | null;
    lateness_seconds: number | null;
    count: number;
    min_count: number;
    files: string;
    closes_at: number;
    /** JSON: files after the close (migration 0004). */
    after_close: string;
  };
  /** deadline 0: every deadline of the local date (migration 0005; `sla_excuses` before it). */
  sla_occurrence_excuses: { rule: string; key_text: string; local_date: string; deadline: number; by: string; at: number; reason: string };
  sla_excuse_events: { id: string; at: number; event: string; rule: string; key_text: string; key: string; local_date: string; deadline: number | null; by: string; reason: string; detail: string | null };
  sla_backfills: { rule: string; from_at: number; through: number; at: number };
  /** An SLA backfill's plan (JSON, BackfillPlan) while it is not done (migration 0007). */
  backfill_plans: { id: string; plan: string; at: number };
  /** One source window of a backfill: its records (JSON, the service's fields) once read, else its failed attempts. */
  backfill_windows: { plan_id: string; stream: string; start_at: number; end_at: number; records: string | null; count: number; attempts: number; error: string | null; at: number };
  /** One flow's one UTC day (contract section 13): arrivals (JSON, the first ARRIVALS_KEPT_PER_DAY), name shape (JSON). */
  flow_days: {
    flow_id: string;
    day: string;
    source: string;
    event: string;
    user: string;
    pieces: string;
    runs: string;
    sample_file: string;
    sample_instance: string;
    count: number;
    arrivals: string;
  };
}

export type HistoryDb = Kysely<HistoryTables>;

export interface OpenedHistoryDatabase {
  db: HistoryDb;
  /** `sqlite` or `postgres`, for logs, the status page and the few statements that differ. */
  dialect: 'sqlite' | 'postgres';
  /** Where it is, without credentials: a file path or `postgres://host:port/db`. */
  where: string;
  /** A driver's message with any credential of the configuration taken out. */
  redact(message: string): string;
  /**
   * Whether the SQLite file opened is still the one at its path. One deleted or replaced since would take writes
   * nobody reads again (lost at the next start): it is closed and the one at the path opened — a new, empty one
   * for a deleted file — saying so in the log; `reopened` then asks the caller to bring its tables up to date (also
   * after a corrupt file was moved aside and a new one started).
   */
  check?(): Promise<'same' | 'reopened'>;
  /** SQLite: `PRAGMA quick_check` on the store's thread; a damaged file is replaced by its newest good backup (onDamage). */
  integrityCheck?(): Promise<string[]>;
  /** SQLite: an online backup into `backups/` (VACUUM INTO), verified, the newest `keep` kept. */
  backup?(at: number, keep: number): Promise<{ file: string; bytes: number }>;
  /** SQLite: `listener` hears of every damaged file moved aside (and what took its place). */
  onDamage?(listener: (damage: MovedAside) => void): void;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'history.sqlite';

/**
 * The connection URL with `history.postgres.password` (or `password_file`) in it. pg lets what the URL says win over
 * its `password` option, and a URL naming a user without a password says the password is empty: the documented
 * `url: postgres://tw@db/tw` with `password_file` never connected ("client password must be a string").
 */
export function withPassword(url: string, password: string | null | undefined): string {
  if (!password) return url;
  try {
    const parsed = new URL(url);
    if (parsed.username === '' || parsed.password !== '' || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')) return url;
    parsed.password = encodeURIComponent(password);
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Open the history database named by `history:` (PostgreSQL) or the embedded SQLite file in `stateDir`, and
 * bring its tables up to date. The same migrations and queries serve both (Kysely builds the SQL of each).
 * Nothing here blocks a start on a database that is down: PostgreSQL connects on the first query.
 */
export function openHistoryDatabase(config: HistoryConfig, stateDir: string, logger: Logger): OpenedHistoryDatabase {
  if (config.postgres) {
    const postgres = config.postgres;
    // pg is loaded when PostgreSQL is configured (at the first query), not by every daemon.
    const pool = async (): Promise<Pool> => {
      const { default: pg } = await import('pg');
      const p = new pg.Pool({
        connectionString: withPassword(postgres.url, postgres.password),
        ...(postgres.password ? { password: postgres.password } : {}),
        max: postgres.max_connections,
        connectionTimeoutMillis: 5_000,
        idleTimeoutMillis: 30_000,
        // A query never hangs the writer or a page for long: the database is asked again later. The server ends a
        // statement itself a little earlier, so a heavy report does not go on using it after the client gave up.
        query_timeout: 30_000,
        statement_timeout: 25_000,
        application_name: 'transfer-watch',
      });
      // An idle connection that breaks (the server restarted) is reported here; without a listener it would end the process.
      p.on('error', (err) => logger.warn({ err: { type: 'PostgresError', message: redactUrl(errorMessage(err), postgres.url) } }, 'history database connection lost; it is reopened on the next query'));
      // A connection that breaks while checked out but between two statements (inside a transaction) has no pool
      // listener: its 'error' event would end the process when the server goes away (a killed PostgreSQL ended the
      // daemon in one CI run). The statement that next uses it fails, and the write waits in the journal.
      p.on('connect', (client) => {
        client.on('error', () => {
          /* reported by the query that uses it next, or by the pool's own listener when idle */
        });
      });
      return p;
    };
    const db = new Kysely<HistoryTables>({ dialect: new PostgresDialect({ pool }) });
    const secrets = config.postgres;
    const redact = (message: string): string => {
      const out = redactUrl(message, secrets.url);
      return secrets.password ? out.split(secrets.password).join('<secret>') : out;
    };
    return { db, dialect: 'postgres', where: describePostgres(config.postgres.url), redact, close: () => db.destroy() };
  }
  mkdirSync(stateDir, { recursive: true });
  const file = join(stateDir, SQLITE_FILE);
  // Opened at the first query (a file that cannot be opened is then a history that does not answer, as a
  // database that is down is: the daemon alerts on).
  // Its statements run on a thread of their own (sqlite-worker.ts): the drivers are synchronous, and a heavy read
  // or a large write held the event loop (health checks, polling) for seconds.
  let opened: { dev: number; ino: number } | undefined;
  // A corrupt file replaced by a new one (at its opening, or found by a statement while running): its tables are to be
  // made again before the next write.
  let replaced = false;
  const damageListeners: Array<(damage: MovedAside) => void> = [];
  const dialect = new WorkerSqliteDialect({
    file,
    onOpen: ({ movedAside }) => {
      if (movedAside) {
        const from = movedAside.restoredFrom;
        logger.error(
          { file, moved_to: movedAside.to, restored_from: from?.file, backup_taken_at: from ? new Date(from.at).toISOString() : undefined, err: { type: 'HistoryCorrupt', message: movedAside.reason } },
          from
            ? 'the history database is damaged: moved aside, its newest good backup restored in its place (what was written since the backup is re-judged from the service history where it can be)'
            : 'the history database is damaged: moved aside, and no good backup to restore: a new, empty one is started (the ledger is filled again from the service history by the backfill)',
        );
        replaced = true;
        for (const l of damageListeners) l(movedAside);
      }
      const st = statSync(file);
      opened = { dev: st.dev, ino: st.ino };
    },
  });
  const db = new Kysely<HistoryTables>({ dialect });
  let reopening: Promise<'reopened'> | undefined;
  const check = (): Promise<'same' | 'reopened'> => {
    if (reopening) return reopening;
    if (replaced) {
      replaced = false;
      return Promise.resolve('reopened');
    }
    if (opened === undefined) return Promise.resolve('same');
    let st: { dev: number; ino: number } | undefined;
    try {
      st = statSync(file);
    } catch {
      st = undefined;
    }
    if (st !== undefined && st.dev === opened.dev && st.ino === opened.ino) return Promise.resolve('same');
    logger.error(
      { file, err: { type: 'HistoryFileGone', message: `${file} was ${st === undefined ? 'deleted' : 'replaced'} while open` } },
      st === undefined
        ? 'the history database was deleted while open: a new one is started there (what the deleted file held is no longer read)'
        : 'the history database was replaced while open: the file now at its path is opened',
    );
    opened = undefined;
    reopening = dialect.reopen().then(
      () => {
        reopening = undefined;
        return 'reopened' as const;
      },
      (err: unknown) => {
        reopening = undefined;
        throw new TransferWatchError('history_file_gone', `the history database ${file} was deleted or replaced and could not be opened again: ${errorMessage(err)}`, { cause: err });
      },
    );
    return reopening;
  };
  const backup = async (at: number, keep: number): Promise<{ file: string; bytes: number }> => {
    const dir = backupsDirOf(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const target = join(dir, backupName(at));
    const partial = `${target}.partial`;
    rmSync(partial, { force: true });
    // On the store's thread, as any statement: the daemon answers meanwhile. Verified by reading it back whole.
    await sql`VACUUM INTO ${partial}`.execute(db);
    try {
      await sql`ATTACH DATABASE ${partial} AS backup`.execute(db);
      const rows = await sql<Record<string, unknown>>`PRAGMA backup.quick_check`.execute(db);
      await sql`DETACH DATABASE backup`.execute(db);
      const found = rows.rows.map((r) => String(Object.values(r)[0] ?? ''));
      if (found.length !== 1 || found[0] !== 'ok') throw new TransferWatchError('history_backup_bad', `the backup ${partial} does not pass quick_check: ${found.slice(0, 3).join('; ')}`);
      chmodSync(partial, 0o600);
      renameSync(partial, target);
    } catch (err) {
      rmSync(partial, { force: true });
      throw err;
    }
    for (const old of listBackups(dir).slice(keep)) rmSync(old.file, { force: true });
    return { file: target, bytes: statSync(target).size };
  };
  return {
    db,
    dialect: 'sqlite',
    where: file,
    redact: (m) => m,
    check,
    integrityCheck: () => dialect.integrityCheck(),
    backup,
    onDamage: (listener) => void damageListeners.push(listener),
    close: () => db.destroy(),
  };
}

/** Apply the migrations not yet applied; throws a TransferWatchError naming the one that failed. */
export async function migrateHistory(db: HistoryDb): Promise<void> {
  const migrations: Record<string, Migration> = HISTORY_MIGRATIONS;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableName: 'tw_migration',
    migrationLockTableName: 'tw_migration_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new TransferWatchError('history_migrate', `cannot bring the history database up to date${failed ? ` (migration ${failed})` : ''}: ${errorMessage(error)}`, { cause: error });
  }
}

/** `postgres://host:port/db` without user or password. */
export function describePostgres(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unparsable url)';
  }
}

/** A driver message with the URL's password taken out (drivers may quote a connection string). */
export function redactUrl(message: string, url: string | undefined): string {
  if (!url) return message;
  let out = message.split(url).join(describePostgres(url));
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password) out = out.split(password).join('<secret>');
  } catch {
    /* not a URL: nothing more to hide */
  }
  return out;
}
