import type { Transfer } from '../source/transfer.js';
import type { Fence } from './fence.js';

/** How far one stream of a source has been read, as its poller committed it (a window's end). */
export interface StreamProgress {
  /** The poll stream's id (`prod/failures`, `prod/successes/PROD1`). */
  stream: string;
  source: string;
  result: 'success' | 'error';
  cursor?: number;
  since?: number;
  lastSuccess?: number;
  /** The stream has windows left to read before it reaches the present (a first start, a restart, a catch-up). */
  catchingUp?: boolean;
}

export type BusEntry = { id: string; transfers: Transfer[] } | { id: string; progress: StreamProgress[] };

/** Where one source's poller hands the transfers of the window it reads, then commits the window. */
export interface WindowWriter {
  add(t: Transfer): void;
  /**
   * Commit the window, fenced by the source lease: its transfers, a progress marker, then the cursors saved under
   * `cursorsKey`. Throws `ha_fenced` when the lease is not ours; transfers of a refused commit are kept for the next.
   */
  commit(fence: Fence | undefined, cursorsKey: string, cursors: unknown, progress: StreamProgress[]): Promise<void>;
}

/**
 * The transfer stream between the roles that poll and the one that leads. The leader reads it in order, so when
 * it reaches a progress marker it has every transfer that came before it: data completeness (a missing file's
 * deadline) is only ever judged on transfers the rules have seen.
 */
export interface TransferBus {
  /** The writer of one source's poller. */
  writer(source: string): WindowWriter;
  /** Entries after `afterId` ('0': from the start), waiting up to `blockMs` for new ones. */
  read(afterId: string, blockMs: number): Promise<BusEntry[]>;
  /** Where the last leader stopped reading; '0' when nobody read yet. */
  consumed(): Promise<string>;
  /** Record (fenced by the leader lease) how far the leader has read and applied. */
  markConsumed(fence: Fence | undefined, id: string): Promise<void>;
}
