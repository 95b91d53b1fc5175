/**
 * What must survive a restart (cursors, alert state, notification log, outbox, silences) is saved as named
 * JSON snapshots. The interface is small so other backends can follow the file one.
 * Callers parse what `load` returns (it is `unknown`): state files are input like any other.
 */
export interface StateStore {
  /** The last snapshot saved under `key`, or undefined when there is none (or it was corrupt and moved aside). */
  load(key: string): Promise<unknown>;
  /** Replace the snapshot under `key` atomically: a crash leaves the old or the new one, never half of one. */
  save(key: string, value: unknown): Promise<void>;
}

/** In-memory store for tests and for `test-rules`. */
export class MemoryStateStore implements StateStore {
  readonly snapshots = new Map<string, string>();

  async load(key: string): Promise<unknown> {
    const text = this.snapshots.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  }

  async save(key: string, value: unknown): Promise<void> {
    this.snapshots.set(key, JSON.stringify(value));
  }
}
