import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The history store's schema, one migration per change, never edited once released (a database of an older
 * version is brought forward by the ones it has not run). Kysely writes each for SQLite and PostgreSQL.
 */
export const HISTORY_MIGRATIONS: Record<string, Migration> = {
  '0001_alert_and_notification_history': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('alert_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('alertname', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('annotations', 'text', (c) => c.notNull())
        .addColumn('silence_id', 'text')
        .addColumn('inhibited_by', 'text')
        .execute();
      await db.schema.createIndex('alert_events_at').on('alert_events').columns(['at', 'id']).execute();
      await db.schema.createIndex('alert_events_alertname_at').on('alert_events').columns(['alertname', 'at', 'id']).execute();
      await db.schema.createIndex('alert_events_fingerprint_at').on('alert_events').columns(['fingerprint', 'at']).execute();

      await db.schema
        .createTable('notification_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('receiver', 'text', (c) => c.notNull())
        .addColumn('integration', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('fingerprints', 'text', (c) => c.notNull())
        .addColumn('alerts', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('notification_attempts_at').on('notification_attempts').columns(['at', 'id']).execute();
      await db.schema.createIndex('notification_attempts_receiver_at').on('notification_attempts').columns(['receiver', 'at', 'id']).execute();

      await db.schema
        .createTable('attempt_alerts')
        .addColumn('attempt_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('attempt_alerts_pk', ['attempt_id', 'fingerprint'])
        .execute();
      await db.schema.createIndex('attempt_alerts_fingerprint_at').on('attempt_alerts').columns(['fingerprint', 'at', 'attempt_id']).execute();
      await db.schema.createIndex('attempt_alerts_at').on('attempt_alerts').column('at').execute();

      await db.schema
        .createTable('silence_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('silence_id', 'text', (c) => c.notNull())
        .addColumn('matchers', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('comment', 'text', (c) => c.notNull())
        .addColumn('starts_at', 'bigint', (c) => c.notNull())
        .addColumn('ends_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('silence_events_at').on('silence_events').columns(['at', 'id']).execute();
      await db.schema.createIndex('silence_events_silence').on('silence_events').columns(['silence_id', 'at']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const t of ['silence_events', 'attempt_alerts', 'notification_attempts', 'alert_events']) await db.schema.dropTable(t).ifExists().execute();
    },
  },
  '0002_sla_ledger': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sla_occurrences')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('key_text', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('local_date', 'text', (c) => c.notNull())
        .addColumn('deadline', 'bigint', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('final', 'integer', (c) => c.notNull())
        .addColumn('arrived_at', 'bigint')
        .addColumn('lateness_seconds', 'integer')
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('min_count', 'integer', (c) => c.notNull())
        .addColumn('files', 'text', (c) => c.notNull())
        .addColumn('closes_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sla_occurrences_date').on('sla_occurrences').columns(['local_date', 'rule', 'key_text']).execute();
      await db.schema.createIndex('sla_occurrences_deadline').on('sla_occurrences').column('deadline').execute();
      await db.schema
        .createTable('sla_excuses')
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('key_text', 'text', (c) => c.notNull())
        .addColumn('local_date', 'text', (c) => c.notNull())
        .addColumn('by', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('sla_excuses_pk', ['rule', 'key_text', 'local_date'])
        .execute();
      // Which rules the ledger was filled for from the service's history (a rule added later is filled then).
      await db.schema
        .createTable('sla_backfills')
        .addColumn('rule', 'text', (c) => c.primaryKey())
        .addColumn('from_at', 'bigint', (c) => c.notNull())
        .addColumn('through', 'bigint', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('sla_backfills').ifExists().execute();
      await db.schema.dropTable('sla_excuses').ifExists().execute();
      await db.schema.dropTable('sla_occurrences').ifExists().execute();
    },
  },
  '0003_flow_days': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('flow_days')
        .addColumn('flow_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('user', 'text', (c) => c.notNull())
        .addColumn('pieces', 'text', (c) => c.notNull())
        .addColumn('runs', 'text', (c) => c.notNull())
        .addColumn('sample_file', 'text', (c) => c.notNull())
        .addColumn('sample_instance', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('arrivals', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('flow_days_pk', ['flow_id', 'day'])
        .execute();
      await db.schema.createIndex('flow_days_day').on('flow_days').column('day').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('flow_days').ifExists().execute();
    },
  },
  '0004_after_close': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sla_occurrences').addColumn('after_close', 'text', (c) => c.notNull().defaultTo('[]')).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sla_occurrences').dropColumn('after_close').execute();
    },
  },
  '0005_excuses_per_deadline': {
    async up(db: Kysely<unknown>): Promise<void> {
      // An excuse of one deadline (deadline) or of every deadline of its local date (deadline 0), and the audit trail
      // of excuses and withdrawals (contract section 11a).
      await db.schema
        .createTable('sla_occurrence_excuses')
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('key_text', 'text', (c) => c.notNull())
        .addColumn('local_date', 'text', (c) => c.notNull())
        .addColumn('deadline', 'bigint', (c) => c.notNull())
        .addColumn('by', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('sla_occurrence_excuses_pk', ['rule', 'key_text', 'local_date', 'deadline'])
        .execute();
      await sql`insert into sla_occurrence_excuses (rule, key_text, local_date, deadline, by, at, reason) select rule, key_text, local_date, 0, by, at, reason from sla_excuses`.execute(db);
      await db.schema.dropTable('sla_excuses').execute();
      await db.schema
        .createTable('sla_excuse_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('key_text', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('local_date', 'text', (c) => c.notNull())
        .addColumn('deadline', 'bigint')
        .addColumn('by', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sla_excuse_events_at').on('sla_excuse_events').columns(['at', 'id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('sla_excuse_events').ifExists().execute();
      await db.schema.dropTable('sla_occurrence_excuses').ifExists().execute();
    },
  },
  '0006_report_attempts': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('notification_attempts').addColumn('about', 'text', (c) => c.notNull().defaultTo('alerts')).execute();
      await db.schema.alterTable('notification_attempts').addColumn('period', 'text').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('notification_attempts').dropColumn('period').execute();
      await db.schema.alterTable('notification_attempts').dropColumn('about').execute();
    },
  },
  '0007_backfill_windows': {
    async up(db: Kysely<unknown>): Promise<void> {
      // What an SLA backfill read so far (contract section 11): its plan (the span and each stream's end, fixed at
      // its first start) and each source window it read (the records) or could not (attempts, the last error), so a
      // stopped or failed backfill resumes instead of reading its whole span again. Emptied when it is done.
      await db.schema
        .createTable('backfill_plans')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('backfill_windows')
        .addColumn('plan_id', 'text', (c) => c.notNull())
        .addColumn('stream', 'text', (c) => c.notNull())
        .addColumn('start_at', 'bigint', (c) => c.notNull())
        .addColumn('end_at', 'bigint', (c) => c.notNull())
        .addColumn('records', 'text')
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('backfill_windows_pk', ['plan_id', 'stream', 'start_at'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('backfill_windows').ifExists().execute();
      await db.schema.dropTable('backfill_plans').ifExists().execute();
    },
  },
  '0008_sla_event_detail': {
    async up(db: Kysely<unknown>): Promise<void> {
      // A re-judged span is an SLA history event too (contract 11c): its span and how many occurrences it judged and
      // changed, as JSON beside the excuses' fields.
      await db.schema.alterTable('sla_excuse_events').addColumn('detail', 'text').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('sla_excuse_events').dropColumn('detail').execute();
    },
  },
  '0009_alert_event_detail': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Acknowledgements and escalations are steps of an alert's life (contract 14): who, with which comment, which
      // step to which receiver, as JSON beside the mute fields.
      await db.schema.alterTable('alert_events').addColumn('detail', 'text').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('alert_events').dropColumn('detail').execute();
    },
  },
};
