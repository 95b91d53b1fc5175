import type { StateStore } from '../state/state-store.js';
import type { Transfer } from '../source/transfer.js';
import { TransferWatchError } from '../util/errors.js';
import type { Fence } from './cluster.js';
import type { BusEntry, StreamProgress, TransferBus, WindowWriter } from './transfer-bus.js';

/** Transfers per entry: one page's worth, so the leader takes them in the same slices the poller read them. */
const BATCH = 1_000;
/** A commit waits for the leader to have applied its window at most this long (no leader reading: go on). */
const APPLIED_WAIT_MS = 2_000;

/**
 * The transfer stream of a cluster of one, in memory. Nobody else can take a source's lease, so a transfer is
 * handed on as soon as it is read (no window is held back until its commit, which on a catch-up of a day would
 * hold a day of transfers); a commit saves the cursors to state.dir and then queues the progress marker, after
 * the window's transfers. The leader drains the queue between the poller's page fetches, so it never holds
 * more than a page or so per stream. Nothing needs to survive a restart: a new leader rebuilds its rule windows
 * from the service's history up to the saved cursors, and polling resumes from them.
 *
 * A commit returns once the leader has applied the window (it came back to read after taking the marker), so
 * a catch-up never reads further ahead of the rules than one window: without it, pages read while the leader
 * evaluates would pile up in memory (a backfill of a million records peaked 150 MB higher).
 */
export class LocalTransferBus implements TransferBus {
  private readonly queue: BusEntry[] = [];
  private sequence = 0;
  private waiting: (() => void) | undefined;
  private open: { source: string; transfers: Transfer[] } | undefined;
  /** Commits waiting for the leader: resolved at the first read after the one that took their marker. */
  private waiters: Array<{ id: number; handed: boolean; resolve: () => void }> = [];

  constructor(private readonly state: StateStore) {}

  writer(source: string): WindowWriter {
    return {
      add: (t) => this.add(source, t),
      commit: (fence, cursorsKey, cursors, progress) => this.commit(fence, cursorsKey, cursors, progress),
    };
  }

  private add(source: string, t: Transfer): void {
    if (this.open?.source !== source || this.open.transfers.length >= BATCH) this.flush();
    if (!this.open) {
      this.open = { source, transfers: [] };
      // A page is handed on synchronously, record by record: close its batch when the page is done.
      queueMicrotask(() => this.flush());
    }
    this.open.transfers.push(t);
  }

  private flush(): void {
    if (!this.open) return;
    this.push({ id: this.nextId(), transfers: this.open.transfers });
    this.open = undefined;
  }

  private async commit(fence: Fence | undefined, cursorsKey: string, cursors: unknown, progress: StreamProgress[]): Promise<void> {
    if (!fence) throw new TransferWatchError('ha_fenced', 'poll window not committed (fenced): this process no longer holds the source lease');
    this.flush();
    await this.state.save(cursorsKey, cursors);
    const id = this.nextId();
    this.push({ id, progress });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, APPLIED_WAIT_MS);
      timer.unref();
      this.waiters.push({
        id: Number(id),
        handed: false,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  private nextId(): string {
    this.sequence += 1;
    return String(this.sequence);
  }

  private push(entry: BusEntry): void {
    this.queue.push(entry);
    const wake = this.waiting;
    this.waiting = undefined;
    wake?.();
  }

  async read(afterId: string, blockMs: number): Promise<BusEntry[]> {
    const after = Number(afterId);
    // The leader is back for more: what it took before is applied.
    const applied = this.waiters.filter((w) => w.handed || w.id <= after);
    this.waiters = this.waiters.filter((w) => !applied.includes(w));
    for (const w of applied) w.resolve();
    while (this.queue.length > 0 && Number(this.queue[0]?.id) <= after) this.queue.shift();
    if (this.queue.length === 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.waiting = undefined;
          resolve();
        }, blockMs);
        timer.unref();
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const entries = this.queue.splice(0, this.queue.length);
    const last = Number(entries[entries.length - 1]?.id ?? after);
    for (const w of this.waiters) if (w.id <= last) w.handed = true;
    return entries;
  }

  /** A new leader of one process starts from what is queued now (nothing before it survives a restart). */
  consumed(): Promise<string> {
    return Promise.resolve(String(this.queue[0] ? Number(this.queue[0].id) - 1 : this.sequence));
  }

  markConsumed(fence: Fence | undefined): Promise<void> {
    if (!fence) throw new TransferWatchError('ha_fenced', 'not written (fenced): this process no longer holds the leader lease');
    return Promise.resolve();
  }
}
