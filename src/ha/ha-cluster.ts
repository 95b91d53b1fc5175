import type { Redis } from 'ioredis';
import type { Logger } from '../util/logger.js';
import { errorMessage } from '../util/errors.js';
import type { HaConfig } from './ha-schema.js';
import { LEADER_LEASE, LeaseCoordinator, sourceLease } from './lease-coordinator.js';
import { connectRedis, createRedis, redisUrlForDisplay } from './redis-connection.js';
import { RedisStateStore } from './redis-state-store.js';
import { TransferBus, type BusEntry } from './transfer-bus.js';

export interface HaClusterEvents {
  onLeaseAcquired(lease: string): void;
  onLeaseLost(lease: string): void;
  onRedisUp(up: boolean): void;
  /** Redis restarted empty: write back what this replica holds (its leases are already restored). */
  onRedisReset(): void;
  /** Another replica changed the silences (pub/sub): reload them. */
  onSilencesChanged(): void;
}

/**
 * Everything a replica shares with the others through Redis: three connections (commands, the blocking stream
 * read, pub/sub), the leases, the transfer stream, and state stores (fenced by the leader lease, or not).
 */
export class HaCluster {
  readonly coordinator: LeaseCoordinator;
  readonly bus: TransferBus;
  /** Unfenced store: silences (any replica may change them). */
  readonly sharedState: RedisStateStore;
  /** Fenced by the leader lease: alert state, notification log, outbox, what the leader consumed. */
  readonly leaderState: RedisStateStore;
  private readonly channel: string;
  private consuming = false;

  private constructor(
    readonly config: HaConfig,
    private readonly redis: Redis,
    private readonly reader: Redis,
    private readonly sub: Redis,
    private readonly logger: Logger,
    sources: readonly string[],
    events: HaClusterEvents,
  ) {
    const prefix = config.redis.key_prefix;
    this.channel = `${prefix}silences`;
    this.bus = new TransferBus(redis, reader, prefix);
    this.coordinator = new LeaseCoordinator({
      redis,
      prefix,
      replica: config.replica_name,
      ttlMs: config.lease_ttl,
      sources,
      logger,
      onAcquired: (lease) => events.onLeaseAcquired(lease),
      onLost: (lease) => events.onLeaseLost(lease),
      onRedisUp: (up) => events.onRedisUp(up),
      onRedisReset: () => events.onRedisReset(),
    });
    this.sharedState = new RedisStateStore({ redis, prefix, logger });
    this.leaderState = new RedisStateStore({ redis, prefix, logger, fence: () => this.coordinator.fence(LEADER_LEASE) });
    // Every replica reloads, the writer too: its notifier may not be the one whose store wrote (leadership changes).
    sub.on('message', (channel: string) => {
      if (channel === this.channel) events.onSilencesChanged();
    });
  }

  /** Connect (a clear start-up error naming the URL without its password when Redis cannot be reached). */
  static async connect(config: HaConfig, logger: Logger, sources: readonly string[], events: HaClusterEvents): Promise<HaCluster> {
    const timeout = Math.max(500, Math.floor(config.lease_ttl / 3));
    const make = (role: string): Promise<Redis> => createRedis(config.redis, { name: `transfer-watch:${config.replica_name}:${role}`, commandTimeoutMs: timeout });
    const redis = await make('commands');
    // The blocking read must not time out as a command: it waits on purpose.
    const reader = await createRedis(config.redis, { name: `transfer-watch:${config.replica_name}:stream`, commandTimeoutMs: 0 });
    const sub = await make('pubsub');
    for (const [conn, role] of [
      [redis, 'commands'],
      [reader, 'stream'],
      [sub, 'pubsub'],
    ] as const) {
      conn.on('error', (err: Error) => logger.debug({ role, err: { type: 'RedisError', message: errorMessage(err) } }, 'redis connection error'));
    }
    await connectRedis(redis, config.redis.url);
    await connectRedis(reader, config.redis.url);
    await connectRedis(sub, config.redis.url);
    const cluster = new HaCluster(config, redis, reader, sub, logger, sources, events);
    await sub.subscribe(cluster.channel);
    logger.info({ redis: redisUrlForDisplay(config.redis.url), replica: config.replica_name, prefix: config.redis.key_prefix }, 'high availability: connected to Redis');
    return cluster;
  }

  /** The fenced store of one source's poller cursors (commits go through the bus). */
  sourceStore(source: string): RedisStateStore {
    return this.sharedState.scoped(`source.${source}`, () => this.coordinator.fence(sourceLease(source)));
  }

  /** Tell the other replicas that the silences changed (they reload within a second). */
  async silencesChanged(): Promise<void> {
    await this.redis.publish(this.channel, this.config.replica_name).catch(() => undefined);
  }

  /**
   * Read the transfer stream from `afterId` until `stop()` is called or `shouldRun` says no: each batch is handed
   * to `onBatch` in order. Errors (Redis down) are retried after a pause; nothing is skipped.
   */
  async consume(afterId: string, shouldRun: () => boolean, onBatch: (entries: BusEntry[]) => Promise<void>): Promise<void> {
    this.consuming = true;
    let last = afterId;
    while (this.consuming && shouldRun()) {
      let entries: BusEntry[];
      try {
        entries = await this.bus.read(last, 1_000);
      } catch (err) {
        this.logger.warn({ err: { type: 'RedisError', message: errorMessage(err) } }, 'cannot read the transfer stream; retrying');
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (entries.length === 0 || !shouldRun()) continue;
      await onBatch(entries);
      last = entries[entries.length - 1]?.id ?? last;
    }
  }

  stopConsuming(): void {
    this.consuming = false;
  }

  /** Leave the cluster: give the leases back (others take over at once), then close the connections. */
  async close(): Promise<void> {
    this.consuming = false;
    await this.coordinator.stop();
    for (const conn of [this.sub, this.reader, this.redis]) conn.disconnect();
  }

  isLeader(): boolean {
    return this.coordinator.holds(LEADER_LEASE);
  }
}
