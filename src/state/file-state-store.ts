import { closeSync, fdatasync, fdatasyncSync, fstatSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from '../util/logger.js';
import { TransferWatchError, errorFields, errorMessage } from '../util/errors.js';
import type { Clock } from '../util/clock.js';
import type { StateStore } from './state-store.js';

const KEY = /^[a-z0-9][a-z0-9_.-]*$/;
/** `<key>.journal.<n>`: a journal set aside by a snapshot that is not durable yet. */
const ROTATED = /^(.+)\.journal\.(\d+)$/;
/** A snapshot's temp file (`<key>.json.tmp-<pid>`), left behind when a process died in the middle of a write. */
const TEMP = /^[a-z0-9][a-z0-9_.-]*\.json\.tmp-\d+$/;

/** The journal file of one key open for appending, in this process. */
interface AppendFile {
  fd: number;
  /** The background fdatasync in flight, if any. */
  syncing: Promise<void> | undefined;
  /** Appends happened while a sync was in flight: sync once more after it. */
  again: boolean;
  /** Rotated away (or the store is closing): close the fd once no sync uses it. */
  retired: boolean;
  closed: boolean;
}

/**
 * One JSON snapshot per key under `dir` (`<key>.json`), written the safe way: temp file, fsync, rename,
 * fsync of the folder. A renamed but unsynced file can come back empty after a power loss, so the rename
 * never comes before the fsync. A file that cannot be parsed is moved aside (`<key>.json.corrupt-<ms>`)
 * with a loud warning and treated as absent, so a damaged state never turns into a crash loop.
 * Writes to the same key are serialised so an older snapshot never overwrites a newer one.
 *
 * Journal of a key (`<key>.journal`): one JSON line per record, written with a single write() on an fd
 * opened with O_APPEND, synchronously and without fsync, so a record is in the page cache (and survives a
 * kill -9) a few microseconds after `append` is called, even while other writes wait for a busy disk.
 * A background fdatasync follows each burst of appends so a power loss loses at most the newest records.
 * `save` rotates the journal (`<key>.journal` → `<key>.journal.<n>`) synchronously when called, and
 * deletes the rotated files only once the snapshot that replaces them is durable; `journal` reads the
 * rotated files and then the current one, so no record is lost whichever moment a crash comes.
 */
export class FileStateStore implements StateStore {
  private readonly queues = new Map<string, Promise<void>>();
  /** Per key, the save waiting for the write in progress (not started yet); later saves replace its value. */
  private readonly waiting = new Map<string, { value: unknown; cutoff: number; done: Promise<void> }>();
  private readonly appendFiles = new Map<string, AppendFile>();
  /** Every journal fd not closed yet, including rotated ones whose last sync is still running. */
  private readonly liveFiles = new Set<AppendFile>();
  /** Rotation numbers of the `<key>.journal.<n>` files on disk, per key. */
  private readonly rotated = new Map<string, number[]>();
  private nextRotation = 1;
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
    // Journals set aside by a previous process that died before its snapshot was durable: they are read
    // by `journal` and deleted by the next snapshot of their key; new rotations must sort after them.
    for (const name of await readdir(this.dir)) {
      // The state dir is locked to this process: a temp file here is a dead process's unfinished write (its
      // rename never happened, so the snapshot it would have replaced is intact). Up to 80 MB were seen left.
      if (TEMP.test(name)) {
        await unlink(path.join(this.dir, name)).catch(() => undefined);
        this.logger.info({ file: name }, 'removed the temp file of a write a previous process did not finish');
        continue;
      }
      const match = ROTATED.exec(name);
      if (!match?.[1] || !match[2] || !KEY.test(match[1])) continue;
      this.noteRotated(match[1], Number(match[2]));
    }
  }

  private file(key: string): string {
    if (!KEY.test(key)) throw new TransferWatchError('state_key', `invalid state key "${key}"`);
    return path.join(this.dir, `${key}.json`);
  }

  private journalFile(key: string): string {
    if (!KEY.test(key)) throw new TransferWatchError('state_key', `invalid state key "${key}"`);
    return path.join(this.dir, `${key}.journal`);
  }

  private noteRotated(key: string, n: number): void {
    const list = this.rotated.get(key) ?? [];
    if (!list.includes(n)) list.push(n);
    list.sort((a, b) => a - b);
    this.rotated.set(key, list);
    this.nextRotation = Math.max(this.nextRotation, n + 1);
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
      this.logger.error({ file, movedTo: aside, err: errorFields(err) }, 'corrupt state file moved aside; starting that part of the state empty');
      return undefined;
    }
  }

  append(key: string, record: unknown): Promise<void> {
    // Everything happens before this returns: the caller's next step (removing a delivered notification
    // from the outbox) must find the record already in the file, and a write queued behind fsyncs in the
    // libuv pool would reopen the window this journal exists to close.
    try {
      const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
      const file = this.openAppendFile(key);
      let written = writeSync(file.fd, bytes);
      // A regular file takes the whole line in one write; a short write (disk full) is finished or fails.
      while (written < bytes.length) written += writeSync(file.fd, bytes, written);
      this.syncSoon(file);
      this.lastWriteOk = true;
      this.lastWriteError = undefined;
      return Promise.resolve();
    } catch (err) {
      if (err instanceof TransferWatchError && err.code === 'state_key') return Promise.reject(err);
      this.lastWriteOk = false;
      this.lastWriteError = errorMessage(err);
      return Promise.reject(
        new TransferWatchError('state_append', `cannot append to state journal ${this.journalFile(key)}: ${errorMessage(err)}`, { cause: err }),
      );
    }
  }

  private openAppendFile(key: string): AppendFile {
    const existing = this.appendFiles.get(key);
    if (existing) return existing;
    const fd = openSync(this.journalFile(key), 'a+', 0o600);
    try {
      // A journal whose last line was torn (power loss mid-append) gets a line break first, so the next
      // record starts a line of its own instead of being glued to the torn one and lost with it.
      const size = fstatSync(fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) writeSync(fd, '\n');
      }
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    const file: AppendFile = { fd, syncing: undefined, again: false, retired: false, closed: false };
    this.appendFiles.set(key, file);
    this.liveFiles.add(file);
    return file;
  }

  /** fdatasync in the background, at most one in flight per file: power-loss durability off the hot path. */
  private syncSoon(file: AppendFile): void {
    if (file.syncing) {
      file.again = true;
      return;
    }
    file.again = false;
    file.syncing = new Promise<void>((resolve) => {
      fdatasync(file.fd, (err) => {
        if (err) this.logger.warn({ dir: this.dir, err: errorFields(err) }, 'cannot fsync a state journal; a power loss may lose its newest records');
        resolve();
      });
    }).then(() => {
      file.syncing = undefined;
      if (file.retired) this.closeFile(file);
      else if (file.again) this.syncSoon(file);
    });
  }

  private closeFile(file: AppendFile): void {
    if (file.closed) return;
    file.closed = true;
    this.liveFiles.delete(file);
    try {
      closeSync(file.fd);
    } catch {
      /* already unusable; nothing left to protect */
    }
  }

  /**
   * Set the current journal of `key` aside, synchronously: records appended from now on go to a fresh
   * file and are not covered by the snapshot about to be written. Returns the highest rotation number
   * of `key` on disk (everything the snapshot replaces), or 0 when there is none.
   */
  private rotateJournal(key: string): number {
    const current = this.journalFile(key);
    const open = this.appendFiles.get(key);
    if (open) {
      this.appendFiles.delete(key);
      open.retired = true;
      if (!open.syncing) this.closeFile(open);
    }
    const n = this.nextRotation;
    try {
      renameSync(current, `${current}.${n}`);
      this.noteRotated(key, n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const list = this.rotated.get(key);
    return list?.[list.length - 1] ?? 0;
  }

  async journal(key: string): Promise<unknown[]> {
    const current = this.journalFile(key);
    const names = await readdir(this.dir);
    for (const name of names) {
      const match = ROTATED.exec(name);
      if (match?.[1] === key && match[2]) this.noteRotated(key, Number(match[2]));
    }
    const files = [...(this.rotated.get(key) ?? []).map((n) => `${current}.${n}`), current];
    const records: unknown[] = [];
    for (const file of files) {
      try {
        await this.readJournalFile(file, records);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw new TransferWatchError('state_read', `cannot read state journal ${file}: ${errorMessage(err)}`, { cause: err });
      }
    }
    return records;
  }

  /**
   * A journal file's records, read line by line as a stream: a journal kept while the history database was down can
   * be tens of megabytes, and reading it whole held the event loop (and twice its size in memory) at a start.
   */
  private async readJournalFile(file: string, into: unknown[]): Promise<void> {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      if (size === 0) return;
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, size - 1);
      // Without its line break the last line was cut by a power loss mid-append: never written in full.
      const torn = last[0] !== 0x0a;
      let unreadable = 0;
      let pending: string | undefined;
      const take = (line: string): void => {
        if (line === '') return;
        try {
          into.push(JSON.parse(line) as unknown);
        } catch {
          unreadable++;
        }
      };
      for await (const line of createInterface({ input: handle.createReadStream({ encoding: 'utf8', autoClose: false }), crlfDelay: Infinity })) {
        if (pending !== undefined) take(pending);
        pending = line;
      }
      if (pending !== undefined) {
        if (torn) this.logger.warn({ file, bytes: Buffer.byteLength(pending) }, 'ignoring a torn last line in a state journal (power loss while appending)');
        else take(pending);
      }
      if (unreadable > 0) this.logger.warn({ file, lines: unreadable }, 'ignoring unreadable lines in a state journal');
    } finally {
      await handle.close();
    }
  }

  save(key: string, value: unknown): Promise<void> {
    let cutoff: number;
    try {
      cutoff = this.rotateJournal(key);
    } catch (err) {
      if (err instanceof TransferWatchError) return Promise.reject(err);
      this.lastWriteOk = false;
      this.lastWriteError = errorMessage(err);
      return Promise.reject(new TransferWatchError('state_write', `cannot rotate state journal of ${key}: ${errorMessage(err)}`, { cause: err }));
    }
    // Saves that queue up behind a write in progress share one write of the newest value: each write costs
    // two fsyncs, and a chain of writes of snapshots that are already outdated only delays the newest.
    const waiting = this.waiting.get(key);
    if (waiting) {
      waiting.value = value;
      waiting.cutoff = Math.max(waiting.cutoff, cutoff);
      return waiting.done;
    }
    const previous = this.queues.get(key) ?? Promise.resolve();
    const entry: { value: unknown; cutoff: number; done: Promise<void> } = { value, cutoff, done: Promise.resolve() };
    entry.done = previous.then(async () => {
      this.waiting.delete(key);
      await this.write(key, entry.value);
      await this.dropRotated(key, entry.cutoff);
    });
    this.waiting.set(key, entry);
    // Keep the chain alive after a failure; the caller still sees the rejection through `done`.
    this.queues.set(key, entry.done.catch(() => undefined));
    return entry.done;
  }

  /** Delete the journals a durable snapshot replaces. A leftover is harmless: its records are replayed again. */
  private async dropRotated(key: string, cutoff: number): Promise<void> {
    const list = this.rotated.get(key);
    if (!list) return;
    const current = this.journalFile(key);
    for (const n of list.filter((m) => m <= cutoff)) {
      try {
        await unlink(`${current}.${n}`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.logger.warn({ file: `${current}.${n}`, err: errorFields(err) }, 'cannot delete a replaced state journal');
          continue;
        }
      }
      list.splice(list.indexOf(n), 1);
    }
  }

  private async write(key: string, value: unknown): Promise<void> {
    const file = this.file(key);
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      const handle = await open(tmp, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(value));
        // Data on disk before the name points at it: a rename that reached the disk before the data would
        // come back from a power loss as an empty file, i.e. a lost outbox or notification log.
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, file);
      await this.syncDir();
      this.lastWriteOk = true;
      this.lastWriteError = undefined;
    } catch (err) {
      this.lastWriteOk = false;
      this.lastWriteError = errorMessage(err);
      // A half-written temp file (disk full) must not linger: it is never read, only takes space.
      await unlink(tmp).catch(() => undefined);
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

  /** Sync and close the journals (graceful stop; tests). Appends after this reopen them. */
  async close(): Promise<void> {
    this.appendFiles.clear();
    for (const file of [...this.liveFiles]) {
      file.retired = true;
      while (file.syncing) await file.syncing;
      if (file.closed) continue;
      try {
        fdatasyncSync(file.fd);
      } catch (err) {
        this.logger.warn({ dir: this.dir, err: errorFields(err) }, 'cannot fsync a state journal at close');
      }
      this.closeFile(file);
    }
  }
}
