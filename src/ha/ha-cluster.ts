import type { Redis } from 'ioredis';
import type { Logger } from '../util/logger.js';
import { LEADER_LEASE, sourceLease, type Cluster, type ClusterDescription, type ClusterEvents } from '../cluster/cluster.js';
import { SharedBoard, type BoardRemote } from '../cluster/shared-board.js';
import type { HaConfig } from './ha-schema.js';
import { LeaseCoordinator } from './lease-coordinator.js';
import { connectRedis, createRedis, redisErrorFields, redisUrlForDisplay } from './redis-connection.js';
import { RedisStateStore } from './redis-state-store.js';
import { RedisTransferBus } from './transfer-bus.js';

/**
 * Replicas sharing one Redis (`ha:`): three connections (commands, the blocking stream read, pub/sub), the
 * leases, the transfer stream, the board, and state stores (fenced by the leader lease, or not).
 */
export class HaCluster implements Cluster {
  readonly coordinator: LeaseCoordinator;
  readonly bus: RedisTransferBus;
  readonly sharedState: RedisStateStore;
  readonly leaderState: RedisStateStore;
  readonly board: SharedBoard;
  readonly description: ClusterDescription;
  private readonly channel: string;

  private constructor(
    readonly config: HaConfig,
    private readonly redis: Redis,
    private readonly reader: Redis,
    private readonly sub: Redis,
    logger: Logger,
    sources: readonly string[],
    events: ClusterEvents,
  ) {
    const prefix = config.redis.key_prefix;
    this.channel = `${prefix}silences`;
    this.bus = new RedisTransferBus(redis, reader, prefix);
    this.coordinator = new LeaseCoordinator({
      redis,
      prefix,
      replica: config.replica_name,
      ttlMs: config.lease_ttl,
      sources,
      logger,
      onAcquired: (lease) => void events.onLeaseAcquired(lease),
      onReleasing: (lease) => events.onLeaseReleasing(lease),
      onLost: (lease, why) => events.onLeaseLost(lease, why),
      onRedisUp: (up) => events.onStoreUp(up),
      onRedisReset: () => events.onStoreReset(),
    });
    this.sharedState = new RedisStateStore({ redis, prefix, logger });
    this.leaderState = new RedisStateStore({ redis, prefix, logger, fence: () => this.coordinator.fence(LEADER_LEASE) });
    this.board = new SharedBoard({ remote: redisBoard(redis, `${prefix}board:`), intervalMs: 1_000, ttlMs: Math.max(3 * config.lease_ttl, 5_000) });
    this.description = {
      shown: true,
      state: { store: 'redis' },
      storeUrl: redisUrlForDisplay(config.redis.url),
      storeDownAlertAfterMs: config.lease_ttl,
    };
    // Every replica reloads, the writer too: its notifier may not be the one whose store wrote (leadership changes).
    sub.on('message', (channel: string) => {
      if (channel === this.channel) events.onSilencesChanged();
    });
  }

  get replica(): string {
    return this.config.replica_name;
  }

  /** Connect (a clear start-up error naming the URL without its password when Redis cannot be reached). */
  static async connect(config: HaConfig, logger: Logger, sources: readonly string[], events: ClusterEvents): Promise<HaCluster> {
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
      conn.on('error', (err: Error) => logger.debug({ role, err: redisErrorFields(err) }, 'redis connection error'));
    }
    await connectRedis(redis, config.redis.url);
    await connectRedis(reader, config.redis.url);
    await connectRedis(sub, config.redis.url);
    const cluster = new HaCluster(config, redis, reader, sub, logger, sources, events);
    await sub.subscribe(cluster.channel);
    logger.info({ redis: redisUrlForDisplay(config.redis.url), replica: config.replica_name, prefix: config.redis.key_prefix }, 'high availability: connected to Redis');
    return cluster;
  }

  sourceStore(source: string): RedisStateStore {
    return this.sharedState.scoped(`source.${source}`, () => this.coordinator.fence(sourceLease(source)));
  }

  /** The replicas must agree on the set of sources: a change takes effect at the next (rolling) restart. */
  setSources(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async silencesChanged(): Promise<void> {
    await this.redis.publish(this.channel, this.config.replica_name).catch(() => undefined);
  }

  /** Leave the cluster: give the leases back (others take over at once), then close the connections. */
  async close(): Promise<void> {
    await this.board.stop();
    await this.coordinator.stop();
    for (const conn of [this.sub, this.reader, this.redis]) conn.disconnect();
  }
}

/** The board on Redis: one key per entry with a TTL, read back with MGET. */
function redisBoard(redis: Redis, prefix: string): BoardRemote {
  return {
    async write(entries, ttlMs) {
      if (entries.size === 0) return;
      const tx = redis.multi();
      for (const [key, json] of entries) tx.set(`${prefix}${key}`, json, 'PX', ttlMs);
      await tx.exec();
    },
    async remove(key) {
      await redis.del(`${prefix}${key}`);
    },
    async read(keys) {
      const out = new Map<string, string>();
      if (keys.length === 0) return out;
      const values = await redis.mget(...keys.map((k) => `${prefix}${k}`));
      keys.forEach((k, i) => {
        const v = values[i];
        if (typeof v === 'string') out.set(k, v);
      });
      return out;
    },
  };
}
