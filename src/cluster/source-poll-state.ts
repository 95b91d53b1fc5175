import type { StateStore } from '../state/state-store.js';
import type { Transfer } from '../source/transfer.js';
import type { Fence } from './cluster.js';
import type { StreamProgress, WindowWriter } from './transfer-bus.js';

/**
 * The state store one source's poller writes through while this process holds the source's lease. The poller
 * hands transfers on as it reads them (`add`); when it commits a window (saves its cursors), the bus gets the
 * window's transfers, a progress marker and the cursors, fenced by the lease. A commit the bus refuses keeps
 * the transfers for the next one, so nothing read is dropped; a lost lease refuses them all, and the next
 * holder reads the window again from the last committed cursor.
 */
export class SourcePollState implements StateStore {
  constructor(
    private readonly opts: {
      source: string;
      writer: WindowWriter;
      /** Where the source's cursors are read from (the bus writes them). */
      store: StateStore;
      fence: () => Fence | undefined;
      /** How far each of the source's streams is read, at commit time. */
      progress: () => StreamProgress[];
    },
  ) {}

  /** A transfer read by the poller, to be committed with its window. */
  add(t: Transfer): void {
    this.opts.writer.add(t);
  }

  load(key: string): Promise<unknown> {
    return this.opts.store.load(key);
  }

  save(key: string, value: unknown): Promise<void> {
    return this.opts.writer.commit(this.opts.fence(), `source.${this.opts.source}.${key}`, value, this.opts.progress());
  }

  append(key: string, record: unknown): Promise<void> {
    return this.opts.store.append(key, record);
  }

  journal(key: string): Promise<unknown[]> {
    return this.opts.store.journal(key);
  }
}
