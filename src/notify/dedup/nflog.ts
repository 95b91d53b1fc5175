import { z } from 'zod';
import type { StateStore } from '../../state/state-store.js';
import type { Logger } from '../../util/logger.js';
import { errorFields, isFencedError } from '../../util/errors.js';

export const NFLOG_STATE_KEY = 'nflog';

/**
 * What was last delivered (or given up on) for one receiver integration and alert group, as in
 * Alertmanager's nflog: the fingerprints of the firing and resolved alerts of that notification and when.
 * `seq` is the outbox id of that notification, so a restart can tell which outbox entries were already
 * delivered even when the crash came before they were removed from the outbox.
 */
export interface NflogEntry {
  firing: string[];
  resolved: string[];
  sentAt: number;
  seq: number;
}

const entrySchema = z.object({
  firing: z.array(z.string()),
  resolved: z.array(z.string()),
  sentAt: z.number(),
  seq: z.number().int(),
});
const snapshotSchema = z.object({ version: z.literal(1), entries: z.record(z.string(), z.unknown()) });

/** Entries not refreshed for this long are forgotten (Alertmanager keeps 120h). */
export const NFLOG_RETENTION_MS = 5 * 24 * 3_600_000;

/** Key of a receiver integration's log of one group. */
export function nflogKey(receiver: string, integration: string, groupKey: string): string {
  return `${receiver}/${integration}/${groupKey}`;
}

/** Journal records between compactions; a restart replays at most this many (each a few hundred bytes). */
export const NFLOG_COMPACT_AFTER = 1_000;

/**
 * One journal record: the entries set and the keys forgotten by one `persist`. Replaying it sets them to
 * these values, so replaying it twice (over a snapshot that already holds it) changes nothing.
 */
const recordSchema = z.object({
  set: z.record(z.string(), z.unknown()).optional(),
  delete: z.array(z.string()).optional(),
});

/**
 * The notification log, kept in memory and persisted as a snapshot plus an append-only journal: each
 * `persist` appends one line with what changed (microseconds, no fsync, so a kill -9 right after a
 * delivery still finds it recorded), and every NFLOG_COMPACT_AFTER records, and after a restore that
 * replayed a journal, the whole log is written as a new snapshot that replaces the journal.
 */
export class NotificationLog {
  private readonly entries = new Map<string, NflogEntry>();
  /** Keys set or forgotten since the last journal record. */
  private readonly changed = new Set<string>();
  private readonly forgotten = new Set<string>();
  private appended = 0;
  private readonly compactAfter: number;

  constructor(
    private readonly state: StateStore,
    private readonly logger: Logger,
    opts: { compactAfter?: number } = {},
  ) {
    this.compactAfter = opts.compactAfter ?? NFLOG_COMPACT_AFTER;
  }

  get(key: string): NflogEntry | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: NflogEntry): void {
    this.entries.set(key, entry);
    this.changed.add(key);
    this.forgotten.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  async restore(): Promise<void> {
    const raw = await this.state.load(NFLOG_STATE_KEY);
    if (raw !== undefined) {
      const snapshot = snapshotSchema.safeParse(raw);
      if (snapshot.success) {
        for (const [key, value] of Object.entries(snapshot.data.entries)) this.restoreEntry(key, value);
      } else {
        this.logger.error({ key: NFLOG_STATE_KEY }, 'notification log has an unknown shape; starting it empty (some notifications may be repeated)');
      }
    }
    const records = await this.state.journal(NFLOG_STATE_KEY);
    for (const raw of records) {
      const record = recordSchema.safeParse(raw);
      if (!record.success) {
        this.logger.warn({ key: NFLOG_STATE_KEY }, 'skipping an unreadable notification log journal record');
        continue;
      }
      for (const [key, value] of Object.entries(record.data.set ?? {})) this.restoreEntry(key, value);
      for (const key of record.data.delete ?? []) this.entries.delete(key);
    }
    this.changed.clear();
    this.forgotten.clear();
    // One file to read at the next start instead of a snapshot and a growing journal.
    if (records.length > 0) await this.compactQuietly();
  }

  private restoreEntry(key: string, value: unknown): void {
    const entry = entrySchema.safeParse(value);
    if (entry.success) this.entries.set(key, entry.data);
    else this.logger.warn({ key }, 'skipping an unreadable notification log entry');
  }

  /** Record what changed since the last call (one journal line); compact now and then. */
  async persist(now: number): Promise<void> {
    for (const [key, entry] of this.entries) {
      if (entry.sentAt + NFLOG_RETENTION_MS < now) {
        this.entries.delete(key);
        this.changed.delete(key);
        this.forgotten.add(key);
      }
    }
    if (this.changed.size === 0 && this.forgotten.size === 0) return;
    const set: Record<string, NflogEntry> = {};
    for (const key of this.changed) {
      const entry = this.entries.get(key);
      if (entry) set[key] = entry;
    }
    const forgotten = [...this.forgotten];
    const record = { ...(Object.keys(set).length > 0 ? { set } : {}), ...(forgotten.length > 0 ? { delete: forgotten } : {}) };
    const changed = [...this.changed];
    this.changed.clear();
    this.forgotten.clear();
    try {
      await this.state.append(NFLOG_STATE_KEY, record);
    } catch (err) {
      // Not recorded: keep them for the next record (or the next snapshot).
      for (const key of changed) if (this.entries.has(key)) this.changed.add(key);
      for (const key of forgotten) if (!this.entries.has(key)) this.forgotten.add(key);
      throw err;
    }
    this.appended += 1;
    if (this.appended >= this.compactAfter) await this.compactQuietly();
  }

  /** Write the whole log as a snapshot; it replaces every journal record appended before this call. */
  async compact(): Promise<void> {
    this.appended = 0;
    await this.state.save(NFLOG_STATE_KEY, { version: 1, entries: Object.fromEntries(this.entries) });
  }

  private async compactQuietly(): Promise<void> {
    try {
      await this.compact();
    } catch (err) {
      // The journal stays and is replayed again next time: nothing is lost. A fenced refusal is no fault: this replica
      // does not lead (a follower restoring the log at its start), and the leader compacts it.
      if (isFencedError(err)) this.logger.debug({ key: NFLOG_STATE_KEY }, 'notification log not compacted here: this replica does not lead; the leader compacts it');
      else this.logger.warn({ key: NFLOG_STATE_KEY, err: errorFields(err) }, 'cannot compact the notification log; its journal is kept and replayed');
    }
  }
}
