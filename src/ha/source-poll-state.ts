import type { StateStore } from '../state/state-store.js';
import type { Transfer } from '../source/transfer.js';
import type { Fence, RedisStateStore } from './redis-state-store.js';
import type { StreamProgress, TransferBus } from './transfer-bus.js';

/**
 * The state store one source's poller writes through on a replica that holds the source's lease. The poller
 * hands transfers on as it reads them (`add`); when it commits a window (saves its cursors), the transfers of
 * the window, a progress marker and the cursors go to Redis in one fenced step (TransferBus.commit). A commit
 * Redis refuses keeps the transfers for the next one, so nothing read is dropped; a lost lease refuses them all,
 * and the next holder reads the window again from the last committed cursor.
 */
export class SourcePollState implements StateStore {
  private pending: Transfer[] = [];

  constructor(
    private readonly opts: {
      source: string;
      bus: TransferBus;
      store: RedisStateStore;
      fence: () => Fence | undefined;
      /** How far each of the source's streams is read, at commit time. */
      progress: () => StreamProgress[];
    },
  ) {}

  /** A transfer read by the poller, to be committed with its window. */
  add(t: Transfer): void {
    this.pending.push(t);
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  load(key: string): Promise<unknown> {
    return this.opts.store.load(key);
  }

  async save(key: string, value: unknown): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      await this.opts.bus.commit(this.opts.fence(), `source.${this.opts.source}.${key}`, value, this.opts.progress(), batch);
    } catch (err) {
      this.pending = [...batch, ...this.pending];
      throw err;
    }
  }

  append(key: string, record: unknown): Promise<void> {
    return this.opts.store.append(key, record);
  }

  journal(key: string): Promise<unknown[]> {
    return this.opts.store.journal(key);
  }
}
