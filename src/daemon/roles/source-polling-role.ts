import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import type { Config, SourceConfig } from '../../config/schema.js';
import { sourceLease, type Cluster } from '../../cluster/cluster.js';
import { SourcePollState } from '../../cluster/source-poll-state.js';
import type { StreamProgress } from '../../cluster/transfer-bus.js';
import type { TransferWatchMetrics } from '../../metrics/transfer-watch-metrics.js';
import { Poller } from '../../poller/poller.js';
import { RESULT_OF, streamKinds } from '../../poller/stream-kind.js';
import type { StateStore } from '../../state/state-store.js';
import { TransferHistoryClient } from '../../source/transfer-history-client.js';
import type { EventLoopShare } from '../../util/time-slice.js';
import type { Transfer } from '../../source/transfer.js';

/** How long a poller may finish its window when its lease is given back or lost (a shutdown has its own grace). */
const HAND_OVER_GRACE_MS = 2_000;

/** The board key under which the holder of a source's lease publishes its streams' status. */
export function streamsBoardKey(source: string): string {
  return `streams:${source}`;
}

export interface SourcePollingRoleOptions {
  cluster: Cluster;
  clock: Clock;
  logger: Logger;
  metrics: TransferWatchMetrics;
  /** The process's event loop, shared by every long job (pages are read in slices). */
  loop: EventLoopShare;
  /** When this process started: a source is not reported down before it had stale_after to answer. */
  startedAt: number;
  config: () => Config;
  /** After every poll cycle (the leader evaluates then, so a failed source is reported without waiting). */
  onCycle: () => void;
}

/**
 * The polling role: one poller per source whose lease this process holds (every source on a single node). It
 * hands what it reads to the cluster's transfer bus, commits each window fenced by the source lease, and
 * publishes its streams' status on the board, so every replica shows every source.
 */
export class SourcePollingRole {
  private readonly pollers = new Map<string, Poller>();
  /** The series created so far, by source: a source's streams and instances as they were then configured. */
  private readonly seriesCreated = new Map<string, string>();
  private stopping = false;

  constructor(private readonly opts: SourcePollingRoleOptions) {}

  /** The lease of `source` is ours: restore its cursors and start polling it. */
  async start(name: string): Promise<void> {
    const source = this.opts.config().sources.find((s) => s.name === name);
    if (!source || this.pollers.has(name) || this.stopping) return;
    const { cluster, metrics, logger } = this.opts;
    this.createSeries(source);
    // The poller's last commit comes after it has left `pollers` (hand-over, loss): its progress is its own.
    const self: { poller?: Poller } = {};
    const state = new SourcePollState({
      source: name,
      writer: cluster.bus.writer(name),
      store: cluster.sourceStore(name),
      fence: () => cluster.coordinator.fence(sourceLease(name)),
      progress: () => streamProgress(self.poller),
    });
    const poller = this.newPoller(source, state, (t) => {
      metrics.observeTransfer(t);
      state.add(t);
    });
    self.poller = poller;
    this.pollers.set(name, poller);
    await poller.restore();
    // Lost again while restoring: leave it to the next holder.
    if (this.pollers.get(name) !== poller) return;
    cluster.board.publish(streamsBoardKey(name), () => poller.status());
    logger.info({ role: 'source poller', lease: sourceLease(name), source: name }, 'polling this source (its lease is ours)');
    poller.start();
  }

  /**
   * The lease is being given back (a rebalance, a stop) and is still ours: finish the cycle in flight and commit
   * its window, so the next holder starts where this one stopped.
   */
  async handOver(name: string, graceMs = HAND_OVER_GRACE_MS): Promise<void> {
    if (await this.stopPolling(name, graceMs, 'handing the source over')) {
      this.opts.logger.info({ role: 'source poller', lease: sourceLease(name), source: name }, 'stopped polling this source; its last window is committed');
    }
  }

  /** The lease is gone (taken over, expired in a pause): stop at once; the next holder reads the window again. */
  async lost(name: string, why: string): Promise<void> {
    if (await this.stopPolling(name, 500, 'its lease was lost')) {
      this.opts.logger.warn({ role: 'source poller', lease: sourceLease(name), source: name, why }, 'stopped polling this source: its lease is no longer ours');
    }
  }

  /** Stop the source's poller (its last commit tried) and withdraw its streams; false when none ran. */
  private async stopPolling(name: string, graceMs: number, why: string): Promise<boolean> {
    const poller = this.pollers.get(name);
    if (!poller) return false;
    this.pollers.delete(name);
    this.opts.cluster.board.withdraw(streamsBoardKey(name));
    await poller.stop(graceMs, why).catch(() => undefined);
    return true;
  }

  /** Every poller ends its cycle and commits (shutdown). */
  async stopAll(graceMs: number): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.pollers.keys()].map((name) => this.handOver(name, graceMs)));
  }

  /** Poll settings or a source's settings changed (a reload): restart every poller held with the new ones. */
  async restartAll(): Promise<void> {
    const names = [...this.pollers.keys()];
    for (const name of names) await this.handOver(name);
    for (const name of names) await this.start(name);
  }

  /** The store came back empty: save every held source's cursors again. */
  async writeBack(): Promise<string[]> {
    for (const poller of this.pollers.values()) await poller.save().catch(() => undefined);
    return [...this.pollers.keys()];
  }

  /**
   * A poller of one source for a leader rebuilding its rule windows: it reads the cursors the source's holder
   * committed and re-reads history before them, handing nothing to the bus and counting nothing in metrics.
   */
  replayPoller(source: SourceConfig): Poller {
    return this.newPoller(source, this.opts.cluster.sourceStore(source.name), () => undefined);
  }

  /**
   * The series of a source this process polls exist at 0 from its first scrape (contract section 9: a replica
   * carries the sources it polls). Created once per source and configuration, not at each lease: a lease that
   * comes back after a rebalance must not zero the source's poll histogram.
   */
  private createSeries(source: SourceConfig): void {
    const poll = this.opts.config().poll;
    const kinds = streamKinds(poll);
    const key = JSON.stringify([kinds, source.instances]);
    if (this.seriesCreated.get(source.name) === key) return;
    this.seriesCreated.set(source.name, key);
    this.opts.metrics.initSource(source.name, kinds, source.instances);
  }

  /** A poller of one source (its series are created when its lease comes, see createSeries). */
  private newPoller(source: SourceConfig, state: StateStore, sink: (t: Transfer) => void): Poller {
    const config = this.opts.config();
    const { metrics, logger, clock } = this.opts;
    return new Poller({
      sources: [source],
      poll: config.poll,
      pagerFor: (s: SourceConfig) =>
        new TransferHistoryClient({
          source: s,
          logger,
          loop: this.opts.loop,
          hooks: { onRequest: (endpoint, statusCode) => metrics.observeApiRequest(s.name, endpoint, statusCode) },
        }),
      clock,
      logger,
      state,
      startedAt: this.opts.startedAt,
      sink,
      hooks: {
        onPoll: (s, stream, seconds, reason) => metrics.observePoll(s, stream, seconds, reason),
        onRecords: (s, stream, n) => metrics.addRecords(s, stream, n),
        onInvalidRecords: (s, n) => metrics.addInvalidRecords(s, n),
        onLag: (s, stream, seconds) => metrics.setDataLag(s, stream, seconds),
      },
      onCycle: () => this.opts.onCycle(),
    });
  }
}

/**
 * How far each stream of a poller is read (what a commit tells the leader). Read from the streams' fields, not
 * their snapshots: a snapshot copies the overlap's seen ids, tens of thousands at the end of a dense backfill.
 */
export function streamProgress(poller: Poller | undefined): StreamProgress[] {
  if (!poller) return [];
  return poller.streams.map((s) => ({
    stream: s.id,
    source: s.source,
    result: RESULT_OF[s.kind],
    ...(s.cursor !== undefined ? { cursor: s.cursor } : {}),
    ...(s.since !== undefined ? { since: s.since } : {}),
    ...(s.lastSuccess !== undefined ? { lastSuccess: s.lastSuccess } : {}),
    ...(s.catchingUp ? { catchingUp: true } : {}),
  }));
}
