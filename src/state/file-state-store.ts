import { mkdir, open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../util/logger.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import type { Clock } from '../util/clock.js';
import type { StateStore } from './state-store.js';

const KEY = /^[a-z0-9][a-z0-9_.-]*$/;

/**
 * One JSON file per key under `dir`, written atomically: temp file, rename, then fsync of the file and of the folder.
 * A file that cannot be parsed is moved aside (`<key>.json.corrupt-<ms>`) with a loud warning and treated
 * as absent, so a damaged state never turns into a crash loop.
 * Writes to the same key are serialised so an older snapshot never overwrites a newer one.
 */
export class FileStateStore implements StateStore {
  private readonly queues = new Map<string, Promise<void>>();
  /** Per key, the save waiting for the write in progress (not started yet); later saves replace its value. */
  private readonly waiting = new Map<string, { value: unknown; done: Promise<void> }>();
  /** Whether the last write succeeded; exposed as a metric and in the status API by the daemon. */
  lastWriteOk = true;
  lastWriteError: string | undefined;

  constructor(
    readonly dir: string,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  private file(key: string): string {
    if (!KEY.test(key)) throw new TransferWatchError('state_key', `invalid state key "${key}"`);
    return path.join(this.dir, `${key}.json`);
  }

  async load(key: string): Promise<unknown> {
    const file = this.file(key);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new TransferWatchError('state_read', `cannot read state file ${file}: ${errorMessage(err)}`, { cause: err });
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      const aside = `${file}.corrupt-${this.clock.now()}`;
      await rename(file, aside).catch(() => undefined);
      this.logger.error({ file, movedTo: aside, err: errorMessage(err) }, 'corrupt state file moved aside; starting that part of the state empty');
      return undefined;
    }
  }

  save(key: string, value: unknown): Promise<void> {
    // Saves that queue up behind a write in progress share one write of the newest value: each write costs
    // two fsyncs, and after a burst of sends the notification log must become durable at once, not after a
    // chain of writes of snapshots that are already outdated (that chain is the window in which a kill -9
    // makes a notification be sent twice).
    const waiting = this.waiting.get(key);
    if (waiting) {
      waiting.value = value;
      return waiting.done;
    }
    const previous = this.queues.get(key) ?? Promise.resolve();
    const entry: { value: unknown; done: Promise<void> } = { value, done: Promise.resolve() };
    entry.done = previous.then(() => {
      this.waiting.delete(key);
      return this.write(key, entry.value);
    });
    this.waiting.set(key, entry);
    // Keep the chain alive after a failure; the caller still sees the rejection through `done`.
    this.queues.set(key, entry.done.catch(() => undefined));
    return entry.done;
  }

  private async write(key: string, value: unknown): Promise<void> {
    const file = this.file(key);
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      const handle = await open(tmp, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(value));
        // In place under its name before the fsyncs: a killed process (kill -9, OOM) loses nothing that reached
        // the page cache, so the notification log that records a delivery counts from here, not after two
        // fsyncs (which take tens of ms on a busy disk and were the window for a duplicate after kill -9).
        // The fsyncs that follow make it survive a power loss too.
        await rename(tmp, file);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.syncDir();
      this.lastWriteOk = true;
      this.lastWriteError = undefined;
    } catch (err) {
      this.lastWriteOk = false;
      this.lastWriteError = errorMessage(err);
      throw new TransferWatchError('state_write', `cannot write state file ${file}: ${errorMessage(err)}`, { cause: err });
    }
  }

  private async syncDir(): Promise<void> {
    // fsync of the folder makes the rename itself durable; some file systems refuse it, which is harmless.
    try {
      const dirHandle = await open(this.dir, 'r');
      try {
        await dirHandle.sync();
      } finally {
        await dirHandle.close();
      }
    } catch {
      /* best effort */
    }
  }
}
