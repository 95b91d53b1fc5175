import type { Redis } from 'ioredis';
import type { StateStore } from '../state/state-store.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';

/** Where a fenced write checks that its lease is still held: the lease key must hold exactly `value`. */
export interface Fence {
  key: string;
  value: string;
}

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
}

// KEYS[1] fence key (or ''), KEYS[2] snapshot, KEYS[3] journal; ARGV[1] fence value, ARGV[2] snapshot JSON.
const FENCED_SAVE = `
if KEYS[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return 1`;
const FENCED_APPEND = `
if KEYS[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end
return redis.call('RPUSH', KEYS[2], ARGV[2])`;
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
    if (!fence) throw new TransferWatchError('ha_fenced', 'not written: this replica no longer holds the lease for it');
    return [fence.key, fence.value];
  }

  async load(key: string): Promise<unknown> {
    const text = await this.opts.redis.get(this.snapshotKey(key));
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new TransferWatchError('state_read', `state ${key} in Redis is not JSON`);
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
      const raw = await this.opts.redis.get(this.snapshotKey(key));
      const next = change(raw === null ? undefined : (JSON.parse(raw) as unknown));
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
      const fenced = errorMessage(err).includes('FENCED');
      if (fenced) throw new TransferWatchError('ha_fenced', `state ${key} not written: another replica holds the lease now`);
      this.lastWriteOk = false;
      this.lastWriteError = errorMessage(err);
      throw new TransferWatchError('state_write', `cannot write state ${key} to Redis: ${errorMessage(err)}`);
    }
  }

  async close(): Promise<void> {
    /* the connection is the daemon's */
  }
}
