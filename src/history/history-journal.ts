import { z } from 'zod';
import type { StateStore } from '../state/state-store.js';
import type { Logger } from '../util/logger.js';
import { historyRecordSchema, type HistoryRecord } from './history-records.js';

export const HISTORY_JOURNAL_KEY = 'history.journal';
/** Records kept at most while the database is down; the oldest go first (counted, logged). */
export const MAX_JOURNALED_RECORDS = 50_000;

/** How far the silences were recorded: the version (updatedAt) of each, and whether its expiry is recorded. */
const silenceMarksSchema = z.record(z.string(), z.object({ updatedAt: z.number(), expired: z.boolean() }));
export type SilenceMarks = z.infer<typeof silenceMarksSchema>;

const snapshotSchema = z.object({
  version: z.literal(1),
  records: z.array(z.unknown()),
  silences: silenceMarksSchema.default({}),
});

/**
 * The durable queue of history records (notification attempts, silence events) on their way to the history
 * database, in the leader's state store (the state directory, or Redis with `ha:`). A record is appended here
 * before what it tells is taken as done (an attempt before the notification log says "sent"), and leaves once
 * the database has it: a crash or a database outage loses nothing, and the database's ids drop the record a
 * crash may make it write twice.
 */
export class HistoryJournal {
  private records: HistoryRecord[] = [];
  private ids = new Set<string>();
  /** Records of requests in flight in this process: their outcome replaces them; not written before. */
  private readonly inFlight = new Set<string>();
  silences: SilenceMarks = {};
  dropped = 0;
  /** Records appended to the state store's journal since the last snapshot (see `add`). */
  private appendedSinceSnapshot = 0;

  constructor(
    private readonly state: StateStore,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.records.length;
  }

  async restore(): Promise<void> {
    const raw = await this.state.load(HISTORY_JOURNAL_KEY);
    const parsed = raw === undefined ? undefined : snapshotSchema.safeParse(raw);
    if (parsed && !parsed.success) this.logger.warn({ err: parsed.error.message }, 'history journal unreadable; records waiting in it are lost');
    this.records = [];
    this.ids.clear();
    this.silences = parsed?.success ? parsed.data.silences : {};
    const appended = await this.state.journal(HISTORY_JOURNAL_KEY);
    let unreadable = 0;
    for (const raw of [...(parsed?.success ? parsed.data.records : []), ...appended]) {
      const record = historyRecordSchema.safeParse(raw);
      if (!record.success) {
        unreadable++;
        continue;
      }
      this.push(record.data);
    }
    if (unreadable > 0) this.logger.warn({ unreadable }, 'history journal records unreadable were skipped');
    if (this.records.length > 0) this.logger.info({ records: this.records.length }, 'history records waiting for the database restored');
    // What was appended is in memory now (each id once, at most MAX_JOURNALED_RECORDS): one snapshot replaces the
    // appended lines, so a journal does not grow from one start to the next while the database stays down.
    if (appended.length > 0) await this.compact();
  }

  /**
   * Make records durable (appended to the journal of the state store); resolves once they are. A record with the
   * id of one waiting replaces it (an attempt's outcome replaces its in-flight record); one already written is
   * not written again.
   */
  async add(records: readonly HistoryRecord[], opts: { inFlight?: boolean } = {}): Promise<void> {
    for (const r of records) {
      if (opts.inFlight) this.inFlight.add(r.id);
      else this.inFlight.delete(r.id);
      this.push(r);
      await this.state.append(HISTORY_JOURNAL_KEY, r);
      this.appendedSinceSnapshot++;
    }
    // While the database is down nothing leaves, and the appended lines would grow without bound (the memory drops
    // the oldest beyond MAX_JOURNALED_RECORDS, the file did not): a snapshot of what is kept replaces them, so the
    // journal holds at most about twice the cap.
    if (this.appendedSinceSnapshot >= MAX_JOURNALED_RECORDS) await this.compact();
  }

  /** The oldest records waiting, at most `max` (requests in flight wait for their outcome). */
  pending(max: number): HistoryRecord[] {
    const out: HistoryRecord[] = [];
    for (const r of this.records) {
      if (out.length >= max) break;
      if (!this.inFlight.has(r.id)) out.push(r);
    }
    return out;
  }

  /** The database has these: they leave, and the journal is compacted into one snapshot. */
  async recorded(ids: ReadonlySet<string>): Promise<void> {
    if (ids.size > 0) {
      this.records = this.records.filter((r) => !ids.has(r.id));
      for (const id of ids) this.ids.delete(id);
    }
    await this.compact();
  }

  /** Write what is waiting (and the silence marks) as one snapshot. */
  async compact(): Promise<void> {
    const appended = this.appendedSinceSnapshot;
    this.appendedSinceSnapshot = 0;
    try {
      await this.state.save(HISTORY_JOURNAL_KEY, { version: 1, records: this.records, silences: this.silences });
    } catch (err) {
      this.appendedSinceSnapshot += appended;
      throw err;
    }
  }

  private push(record: HistoryRecord): void {
    if (this.ids.has(record.id)) {
      // The later word on the same record (journal order): replaces it in place.
      const i = this.records.findIndex((r) => r.id === record.id);
      if (i >= 0) this.records[i] = record;
      return;
    }
    if (this.records.length >= MAX_JOURNALED_RECORDS) {
      const oldest = this.records.shift();
      if (oldest) this.ids.delete(oldest.id);
      this.dropped++;
      if (this.dropped === 1 || this.dropped % 1_000 === 0) {
        this.logger.error({ dropped: this.dropped, kept: MAX_JOURNALED_RECORDS }, 'HISTORY RECORDS DROPPED: the history database has been unreachable for long; the oldest records waiting for it are given up');
      }
    }
    this.records.push(record);
    this.ids.add(record.id);
  }
}
