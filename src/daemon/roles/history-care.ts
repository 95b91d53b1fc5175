import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import type { HistoryDamage, HistoryStore } from '../../history/history-store.js';
import { listBackups, backupsDirOf } from '../../history/sqlite-file.js';
import type { Clock } from '../../util/clock.js';
import { errorFields } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import type { RejudgeRequest, RejudgeResult } from '../../http/sla-routes.js';

const DAY = 86_400_000;

/**
 * Written by `transfer-watch history restore` (the daemon stopped) beside the history file: the next start re-judges
 * the ledger's span since the backup it restored, as after a damage found while running.
 */
export const RESTORED_MARKER = 'history.restored.json';
export const restoredMarkerSchema = z.object({ backup: z.string(), backup_taken_at: z.number(), restored_at: z.number(), moved_to: z.string() });

export interface HistoryCareOptions {
  store: HistoryStore;
  config: () => Config;
  clock: Clock;
  logger: Logger;
  /** Re-decide a span of the ledger from the service's history (the restored backup's since). */
  rejudge: (req: RejudgeRequest) => Promise<RejudgeResult>;
  /** Fill the ledger again from the service's history (an empty file replaced a damaged one without a backup). */
  backfill: () => Promise<void>;
}

/**
 * The SQLite history looked after while this process writes it (contract 12a): `PRAGMA quick_check` at the start and
 * every `history.check_interval` on the store's thread (a damaged file is replaced by its newest good backup there),
 * an online backup every `history.backup.interval` (and at a start whose newest backup is older than that), and the
 * repair after a damage: the ledger's span since the restored backup re-judged from the service history (or, without
 * a backup, filled again by the backfill), the loss said in the log. On PostgreSQL it does nothing: the server keeps
 * its own durability (docs/history.md: pg_dump, point-in-time recovery).
 */
export class HistoryCare {
  private checkTimer: NodeJS.Timeout | undefined;
  private backupTimer: NodeJS.Timeout | undefined;
  private repairing: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: HistoryCareOptions) {}

  start(): void {
    if (this.o.store.opened.dialect !== 'sqlite') return;
    this.stopped = false;
    this.adoptRestoreByHand();
    const history = this.o.config().history;
    void this.check();
    this.checkTimer = setInterval(() => void this.check(), history.check_interval);
    this.checkTimer.unref();
    this.backupTimer = setInterval(() => void this.backup(), history.backup.interval);
    this.backupTimer.unref();
  }

  /**
   * A backup now when the newest is older than history.backup.interval (or there is none): called once the start's
   * backfill is written, so that the first backup holds the ledger it filled.
   */
  async backupIfStale(): Promise<void> {
    if (this.o.store.opened.dialect !== 'sqlite' || this.stopped) return;
    const newest = listBackups(backupsDirOf(this.o.store.opened.where))[0];
    if (newest === undefined || this.o.clock.now() - newest.at >= this.o.config().history.backup.interval) await this.backup();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.checkTimer);
    clearInterval(this.backupTimer);
  }

  /** One integrity check now; a damage found (now, or by a statement since) is repaired. */
  async check(): Promise<string[]> {
    let problems: string[] = [];
    try {
      await this.o.store.ensureSchema();
      problems = await this.o.store.integrityCheck();
      if (problems.length > 0) this.o.logger.error({ history: this.o.store.opened.where, problems: problems.slice(0, 10) }, 'the history database failed its integrity check (quick_check)');
    } catch (err) {
      this.o.logger.warn({ err: errorFields(err) }, 'could not check the history database; checked again at the next history.check_interval');
    }
    await this.repairIfDamaged();
    return problems;
  }

  /** One backup now (verified; the oldest beyond history.backup.keep deleted). */
  async backup(): Promise<{ file: string; bytes: number } | undefined> {
    if (this.o.store.damage) return undefined; // never a backup of a file just replaced, before it is repaired
    try {
      const taken = await this.o.store.backup(this.o.clock.now(), this.o.config().history.backup.keep);
      if (taken) this.o.logger.info({ backup: taken.file, bytes: taken.bytes }, 'history database backed up (verified)');
      return taken;
    } catch (err) {
      this.o.logger.error({ err: errorFields(err) }, 'the history database could not be backed up; tried again at the next history.backup.interval');
      return undefined;
    }
  }

  /** The repair of a damage found, once at a time: until it is done, the store says it is damaged. */
  repairIfDamaged(): Promise<void> {
    const damage = this.o.store.damage;
    if (!damage || this.stopped) return Promise.resolve();
    this.repairing ??= this.repair(damage).finally(() => {
      this.repairing = undefined;
    });
    return this.repairing;
  }

  private async repair(damage: HistoryDamage): Promise<void> {
    const { store, logger, clock } = this.o;
    try {
      await store.ensureSchema();
      if (damage.restoredFrom) {
        const since = damage.restoredFrom.at;
        // Local dates of every zone: the day before the backup's UTC date through today's.
        const from = new Date(since - DAY).toISOString().slice(0, 10);
        const to = new Date(clock.now() + DAY).toISOString().slice(0, 10);
        const result = await this.o.rejudge({ from, to, by: 'transfer-watch', reason: `the history database was restored from its backup of ${new Date(since).toISOString()} after damage` });
        // A rule the backup does not know as filled (a backup taken before its backfill was written) is filled now.
        await this.o.backfill();
        this.done();
        logger.warn(
          {
            backup_taken_at: new Date(since).toISOString(),
            damage_found_at: new Date(damage.at).toISOString(),
            lost_span_ms: damage.at - since,
            ledger_judged: result.judged,
            ledger_changed: result.changed,
            moved_to: damage.to,
          },
          'the history database is repaired: the SLA ledger since the backup is judged again from the service history; the alert and notification history written between the backup and the damage is lost but for what the state store journal still held (written again), and so are excuses given meanwhile (the damaged file is kept aside)',
        );
      } else {
        await this.o.backfill();
        this.done();
        logger.warn(
          { damage_found_at: new Date(damage.at).toISOString(), moved_to: damage.to, backfill: this.o.config().sla.backfill },
          this.o.config().sla.backfill > 0
            ? 'the history database was replaced by a new one without a backup: the SLA ledger is filled again from the service history (sla.backfill); the alert and notification history before is lost (the damaged file is kept aside)'
            : 'the history database was replaced by a new one without a backup and sla.backfill is 0: the SLA ledger and the history before are lost (the damaged file is kept aside)',
        );
      }
    } catch (err) {
      logger.error({ err: errorFields(err) }, 'the damaged history database could not be repaired yet; tried again at the next history.check_interval');
    }
  }

  /** Repaired (before it is said): the store is whole again, and a restore by hand's mark is dropped. */
  private done(): void {
    this.o.store.repaired();
    rmSync(join(dirname(this.o.store.opened.where), RESTORED_MARKER), { force: true });
  }

  /** A restore by `transfer-watch history restore` while the daemon was stopped: repaired as one found running. */
  private adoptRestoreByHand(): void {
    const marker = join(dirname(this.o.store.opened.where), RESTORED_MARKER);
    if (!existsSync(marker)) return;
    try {
      const m = restoredMarkerSchema.parse(JSON.parse(readFileSync(marker, 'utf8')));
      this.o.store.damaged({ at: m.restored_at, to: m.moved_to, reason: 'restored by hand (transfer-watch history restore)', restoredFrom: { file: m.backup, at: m.backup_taken_at } });
    } catch (err) {
      this.o.logger.warn({ err: errorFields(err), marker }, 'the mark of a restore by hand cannot be read; its span is not re-judged (transfer-watch sla rejudge can)');
      rmSync(marker, { force: true });
    }
  }
}
