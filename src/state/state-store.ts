/**
 * What must survive a restart (cursors, alert state, notification log, outbox, silences) is saved as named
 * JSON snapshots. A key that changes often and must be recorded at once (the notification log) also has a
 * journal: records appended after its snapshot, replayed over it on load. The interface is small so other
 * backends can follow the file one.
 * Callers parse what `load` and `journal` return (they are `unknown`): state files are input like any other.
 *
 * Journal records are replayed in order over the snapshot and may be replayed over a snapshot that already
 * contains them (a crash between a compaction's snapshot and the removal of the journal it replaces), so a
 * record must be an idempotent "set to" and never a "change by".
 */
export interface StateStore {
  /** The last snapshot saved under `key`, or undefined when there is none (or it was corrupt and moved aside). */
  load(key: string): Promise<unknown>;
  /**
   * Replace the snapshot under `key` atomically: a crash leaves the old or the new one, never half of one.
   * The new snapshot also replaces every journal record appended under `key` before this call (the caller's
   * value must contain them); records appended while it is being written stay in the journal.
   */
  save(key: string, value: unknown): Promise<void>;
  /**
   * Append one record to the journal of `key`. Cheap (no fsync): a killed process keeps it once the
   * returned promise resolves; a power loss may lose the newest records until the next snapshot.
   */
  append(key: string, record: unknown): Promise<void>;
  /** The records appended under `key` since its last snapshot, oldest first; unreadable ones are skipped. */
  journal(key: string): Promise<unknown[]>;
  /**
   * Optional, for stores several processes share (Redis): replace the snapshot with `change(current)`
   * atomically against concurrent writers, and return what was written. Stores of one process leave it out.
   */
  update?(key: string, change: (current: unknown) => unknown): Promise<unknown>;
}

/** In-memory store for tests and for `test-rules`. */
export class MemoryStateStore implements StateStore {
  readonly snapshots = new Map<string, string>();
  readonly journals = new Map<string, string[]>();

  async load(key: string): Promise<unknown> {
    const text = this.snapshots.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  }

  save(key: string, value: unknown): Promise<void> {
    // Synchronously, like the file store's journal rotation: appends after this call stay in the journal.
    this.snapshots.set(key, JSON.stringify(value));
    this.journals.delete(key);
    return Promise.resolve();
  }

  append(key: string, record: unknown): Promise<void> {
    const lines = this.journals.get(key) ?? [];
    lines.push(JSON.stringify(record));
    this.journals.set(key, lines);
    return Promise.resolve();
  }

  async journal(key: string): Promise<unknown[]> {
    return (this.journals.get(key) ?? []).map((line) => JSON.parse(line) as unknown);
  }
}
