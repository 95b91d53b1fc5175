/**
 * What the daemon's roles run on: leases, the transfer bus, state stores and the board. A single node is a
 * cluster of one (local-cluster.ts); `ha:` runs the same roles on Redis (src/ha/ha-cluster.ts).
 */
import type { StateStore } from '../state/state-store.js';
import type { SharedBoard } from './shared-board.js';
import type { TransferBus } from './transfer-bus.js';
import type { Fence } from './fence.js';

/** The lease of the replica that evaluates rules and sends notifications (one at a time). */
export const LEADER_LEASE = 'leader';

/** The lease name of a source's polling. */
export function sourceLease(source: string): string {
  return `source:${source}`;
}

/** The source a lease is for, or undefined for the leader lease. */
export function sourceOfLease(lease: string): string | undefined {
  return lease.startsWith('source:') ? lease.slice('source:'.length) : undefined;
}

export type { Fence } from './fence.js';

/** What a state store must tell the daemon besides the interface: whether its last write went through. */
export type ClusterStateStore = StateStore & { lastWriteOk: boolean; lastWriteError: string | undefined };

/** What the roles hear from the coordination: leases come and go, and the shared store's health. */
export interface ClusterEvents {
  /** The lease is ours. A coordinator of one awaits the returned promise before granting the next lease. */
  onLeaseAcquired(lease: string): void | Promise<void>;
  /** The lease is about to be given back (a rebalance, a stop): finish its work while it is still ours. */
  onLeaseReleasing(lease: string): Promise<void>;
  /** The lease is no longer ours; `why` says how (given back, taken over, expired during a pause). */
  onLeaseLost(lease: string, why: string): void;
  /** The shared store answered (true) or not (false). */
  onStoreUp(up: boolean): void;
  /** The shared store came back without its data: write back what this replica holds. */
  onStoreReset(): void;
  /** Another replica changed the silences: reload them. */
  onSilencesChanged(): void;
}

/** Who may do what: leases with fencing tokens. */
export interface Coordinator {
  /** First round: leases granted in it have been handed to `onLeaseAcquired`. */
  start(): Promise<void>;
  /** Give every lease back (others take over at once) and stop. */
  stop(): Promise<void>;
  /** Whether this process may act on the lease now, without asking anyone. */
  holds(lease: string): boolean;
  /** The shared store's check right before a fenced step (a send): true while the lease is still ours. */
  confirm(lease: string): Promise<boolean>;
  /** What a fenced write compares before it writes; undefined when the lease is not ours. */
  fence(lease: string): Fence | undefined;
  /** Who holds each lease now (null: nobody). */
  holders(): Promise<Record<string, string | null>>;
  readonly up: boolean;
  /** The replicas alive now, this one included. */
  readonly replicas: readonly string[];
}

/** How the cluster is shown in `/api/v1/status` and on the page: only when there is more than a process to show. */
export interface ClusterDescription {
  /** `ha` in the status API: which replica this is and who holds what. */
  shown: boolean;
  /** `state` in the status API: where the state lives (`{ dir }` or `{ store: 'redis' }`). */
  state: Record<string, string>;
  /** Where the shared store is, for logs and the coordination alert (no password). */
  storeUrl: string | undefined;
  /** How long the store may be unreachable before the coordination alert fires; undefined: it has none. */
  storeDownAlertAfterMs: number | undefined;
}

/**
 * The replicas a daemon runs with: one process (LocalCluster: every lease granted at once, state in state.dir)
 * or several sharing Redis (HaCluster). The roles run the same code on either; only this object differs.
 */
export interface Cluster {
  readonly replica: string;
  readonly coordinator: Coordinator;
  readonly bus: TransferBus;
  /** Unfenced: silences (any replica may change them). */
  readonly sharedState: ClusterStateStore;
  /** Fenced by the leader lease: alert state, notification log, outbox. */
  readonly leaderState: ClusterStateStore;
  /** What each replica shows the others: stream status, the leader's expectations and sends. */
  readonly board: SharedBoard;
  readonly description: ClusterDescription;
  /** The fenced store of one source's poller cursors (its commits go through the bus). */
  sourceStore(source: string): StateStore;
  /**
   * A reload changed the sources: true when the cluster took the new set (a cluster of one grants and gives
   * back leases), false when it keeps the old one until a restart (replicas must agree on the set).
   */
  setSources(sources: readonly string[]): Promise<boolean>;
  /** Tell the other replicas that the silences changed. */
  silencesChanged(): Promise<void>;
  /** Give the leases back and close connections and files. */
  close(): Promise<void>;
}
