import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { FileStateStore } from '../state/file-state-store.js';
import { StateDirLock } from '../state/state-dir-lock.js';
import type { StateStore } from '../state/state-store.js';
import type { Cluster, ClusterDescription, ClusterEvents } from './cluster.js';
import { LocalCoordinator } from './local-coordinator.js';
import { LocalTransferBus } from './local-transfer-bus.js';
import { SharedBoard } from './shared-board.js';

/** Before roles, a single node saved every source's cursors under one key; read it until a source saves its own. */
const LEGACY_CURSORS_KEY = 'cursors';

/**
 * A cluster of one (no `ha:`): this process holds every lease, the state lives in `state.dir` (locked against a
 * second process), the transfer stream is in memory, and the board is only read here.
 */
export class LocalCluster implements Cluster {
  readonly replica: string;
  readonly coordinator: LocalCoordinator;
  readonly bus: LocalTransferBus;
  readonly sharedState: FileStateStore;
  readonly leaderState: FileStateStore;
  readonly board = new SharedBoard();
  readonly description: ClusterDescription;

  private constructor(
    private readonly state: FileStateStore,
    private readonly lock: StateDirLock,
    dir: string,
    sources: readonly string[],
    events: ClusterEvents,
  ) {
    this.replica = hostname();
    this.sharedState = state;
    this.leaderState = state;
    this.bus = new LocalTransferBus(state);
    this.coordinator = new LocalCoordinator({ replica: this.replica, sources, events });
    this.description = { shown: false, state: { dir }, storeUrl: undefined, storeDownAlertAfterMs: undefined };
  }

  /** Lock `dir` (created if missing) and open its state; throws when another process holds the lock. */
  static async open(opts: { dir: string; sources: readonly string[]; logger: Logger; clock: Clock; events: ClusterEvents }): Promise<LocalCluster> {
    await mkdir(opts.dir, { recursive: true });
    const lock = StateDirLock.acquire(opts.dir);
    const state = new FileStateStore(opts.dir, opts.logger, opts.clock);
    try {
      await state.init();
    } catch (err) {
      lock.release();
      throw err;
    }
    return new LocalCluster(state, lock, opts.dir, opts.sources, opts.events);
  }

  sourceStore(source: string): StateStore {
    const state = this.state;
    const scoped = (key: string): string => `source.${source}.${key}`;
    return {
      // The legacy snapshot holds every source's streams by id; the poller takes its own from it.
      load: async (key) => (await state.load(scoped(key))) ?? (key === LEGACY_CURSORS_KEY ? state.load(LEGACY_CURSORS_KEY) : undefined),
      save: (key, value) => state.save(scoped(key), value),
      append: (key, record) => state.append(scoped(key), record),
      journal: (key) => state.journal(scoped(key)),
    };
  }

  /** A reload changed the sources: leases of removed ones are given back, new ones granted (a cluster of one may). */
  async setSources(sources: readonly string[]): Promise<boolean> {
    await this.coordinator.setSources(sources);
    return true;
  }

  silencesChanged(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.coordinator.stop();
    await this.state.close();
    this.lock.release();
  }
}
