import type { Redis } from 'ioredis';
import type { StateStore } from '../state/state-store.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { Fence } from '../cluster/cluster.js';
import { FENCE_CHECK, fencedError } from './fencing.js';

export interface RedisStateStoreOptions {
  redis: Redis;
  /** `ha.redis.key_prefix`. */
  prefix: string;
  /**
   * The lease a write needs, asked at every write; undefined (the lease is lost) refuses the write. Absent:
   * writes are not fenced (silences, which any replica may change).
   */
  fence?: () => Fence | undefined;
  /** Names keys within the store (`cursors` of one source become `source.prod.cursors`). */
  namespace?: string;
  /** Says when a corrupt key is moved aside. */
  logger?: Logger;
}

// KEYS[1] fence key (or ''), KEYS[2] snapshot, KEYS[3] journal; ARGV[1] fence value, ARGV[2] snapshot JSON.
const FENCED_SAVE = `${FENCE_CHECK}
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return 1`;
const FENCED_APPEND = `${FENCE_CHECK}
return redis.call('RPUSH', KEYS[2], ARGV[2])`;
// Move a value aside only if it is still the one read: KEYS[1] snapshot, KEYS[2] quarantine; ARGV[1] the value read.
const QUARANTINE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1`;
// Compare-and-set: KEYS[1] snapshot; ARGV[1] the value read ('' = absent), ARGV[2] the new value.
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (current == false and ARGV[1] ~= '') or (current ~= false and current ~= ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

/**
 * The state store on Redis (contract section 9), behind the same interface as the file store: a snapshot per
 * key (a string) and its journal (a list). A save replaces the snapshot and drops the journal in one script,
 * so nobody ever reads a half; a fenced store checks its lease in the same script, so a replica that lost its
 * lease (paused, partitioned) cannot overwrite what its successor wrote.
 */
export class RedisStateStore implements StateStore {
  lastWriteOk = true;
  lastWriteError: string | undefined;

  constructor(private readonly opts: RedisStateStoreOptions) {}

  /** The same Redis and fence with keys under `namespace` (one source's cursors). */
  scoped(namespace: string, fence?: () => Fence | undefined): RedisStateStore {
    return new RedisStateStore({ ...this.opts, namespace, ...(fence ? { fence } : {}) });
  }

  private snapshotKey(key: string): string {
    return `${this.opts.prefix}state:${this.opts.namespace ? `${this.opts.namespace}.` : ''}${key}`;
  }

  private journalKey(key: string): string {
    return `${this.opts.prefix}journal:${this.opts.namespace ? `${this.opts.namespace}.` : ''}${key}`;
  }

  private fenceArgs(): [string, string] {
    if (!this.opts.fence) return ['', ''];
    const fence = this.opts.fence();
    if (!fence) throw new TransferWatchError('ha_fenced', 'not written (fenced): this replica no longer holds the lease for it');
    return [fence.key, fence.value];
  }

  async load(key: string): Promise<unknown> {
    const text = await this.opts.redis.get(this.snapshotKey(key));
    if (text === null) return undefined;
    return this.parseOrQuarantine(key, text);
  }

  /**
   * The value of a snapshot, or undefined when it is not JSON: then it is moved aside to
   * `<prefix>quarantine:<key>:<ms>` (kept, never read again) and logged, as the file store moves a corrupt file
   * aside. Garbage written into `state:alerts` made every replica refuse to start; now each one that reads it
   * (at start, or a running follower refreshing its view) carries on without it.
   */
  private async parseOrQuarantine(key: string, text: string): Promise<unknown> {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      const snapshot = this.snapshotKey(key);
      const aside = `${this.opts.prefix}quarantine:${this.opts.namespace ? `${this.opts.namespace}.` : ''}${key}:${Date.now()}`;
      const moved = await this.opts.redis.eval(QUARANTINE, 2, snapshot, aside, text).catch(() => 0);
      this.opts.logger?.error(
        { key: snapshot, movedTo: moved === 1 ? aside : undefined, bytes: text.length },
        moved === 1 ? 'state in Redis is not JSON; moved it aside and continuing without it' : 'state in Redis is not JSON; continuing without it',
      );
      return undefined;
    }
  }

  async save(key: string, value: unknown): Promise<void> {
    await this.write(async () => {
      const [fenceKey, fenceValue] = this.fenceArgs();
      await this.opts.redis.eval(FENCED_SAVE, 3, fenceKey, this.snapshotKey(key), this.journalKey(key), fenceValue, JSON.stringify(value));
    }, key);
  }

  async append(key: string, record: unknown): Promise<void> {
    await this.write(async () => {
      const [fenceKey, fenceValue] = this.fenceArgs();
      await this.opts.redis.eval(FENCED_APPEND, 2, fenceKey, this.journalKey(key), fenceValue, JSON.stringify(record));
    }, key);
  }

  async journal(key: string): Promise<unknown[]> {
    const lines = await this.opts.redis.lrange(this.journalKey(key), 0, -1);
    const out: unknown[] = [];
    for (const line of lines) {
      try {
        out.push(JSON.parse(line) as unknown);
      } catch {
        /* unreadable records are skipped, as in the file store */
      }
    }
    return out;
  }

  /**
   * Replace a snapshot computed from its current value, atomically against concurrent writers (other replicas
   * changing silences): read, compute, compare-and-set, again on a conflict.
   */
  async update(key: string, change: (current: unknown) => unknown): Promise<unknown> {
    for (let attempt = 0; attempt < 20; attempt++) {
      let raw = await this.opts.redis.get(this.snapshotKey(key));
      let current: unknown;
      if (raw !== null) {
        current = await this.parseOrQuarantine(key, raw);
        // Moved aside: compare against an absent key from here on.
        if (current === undefined) raw = null;
      }
      const next = change(current);
      const ok = await this.opts.redis.eval(COMPARE_AND_SET, 1, this.snapshotKey(key), raw ?? '', JSON.stringify(next));
      if (ok === 1) return next;
    }
    throw new TransferWatchError('state_write', `state ${key}: too many concurrent changes, try again`);
  }

  private async write(work: () => Promise<void>, key: string): Promise<void> {
    try {
      await work();
      this.lastWriteOk = true;
      this.lastWriteError = undefined;
    } catch (err) {
      if (err instanceof TransferWatchError && err.code === 'ha_fenced') throw err;
      const fenced = fencedError(err, `state ${key}`);
      if (fenced) throw fenced;
      this.lastWriteOk = false;
      this.lastWriteError = errorMessage(err);
      throw new TransferWatchError('state_write', `cannot write state ${key} to Redis: ${errorMessage(err)}`);
    }
  }

  async close(): Promise<void> {
    /* the connection is the daemon's */
  }
}
