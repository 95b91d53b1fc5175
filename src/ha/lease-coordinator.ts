import { redisErrorFields } from './redis-connection.js';
import type { Redis } from 'ioredis';
import type { Logger } from '../util/logger.js';
import { LEADER_LEASE, sourceLease, type Coordinator, type Fence } from '../cluster/cluster.js';

/** How long a lease's work may take to finish before the lease is given back anyway (a rebalance). */
const RELEASE_GRACE_MS = 5_000;

/** What a lease is for, in log lines: the role that holds it. */
function roleOf(lease: string): string {
  return lease === LEADER_LEASE ? 'leader' : 'source poller';
}

export interface LeaseCoordinatorOptions {
  redis: Redis;
  /** `ha.redis.key_prefix`. */
  prefix: string;
  replica: string;
  ttlMs: number;
  /** Every source to be polled by exactly one replica. */
  sources: readonly string[];
  logger: Logger;
  /** A monotonic clock in ms (performance.now): a wall-clock jump must not extend or cut a lease. */
  monotonic?: () => number;
  onAcquired(lease: string, token: number): void;
  onLost(lease: string, why: string): void;
  /** Before a lease is given back (a rebalance, a stop): its work is finished while the lease is still ours. */
  onReleasing?(lease: string): Promise<void>;
  /** Redis answered (true) or not (false) at a heartbeat. */
  onRedisUp?(up: boolean): void;
  /** Redis came back without its data (restarted empty): write back what this replica holds. */
  onRedisReset?(): void;
}

interface Held {
  token: number;
  /** Monotonic ms until which the lease is ours without another successful renewal. */
  validUntil: number;
  acquiredAt: number;
}

// KEYS[1] lease, KEYS[2] fencing counter; ARGV[1] replica, ARGV[2] ttl ms. Returns the token, or 0 when taken.
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
return token`;
// KEYS[1] lease; ARGV[1] value, ARGV[2] ttl ms. 1 when renewed, 0 when the lease is no longer ours.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
// KEYS[1] replicas zset; ARGV[1] replica, ARGV[2] ttl ms. Registers a heartbeat on Redis's clock; returns the live replicas.
const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

/**
 * Leases on Redis with fencing tokens: one per source (who polls it) and one for the leader (who evaluates
 * rules and notifies). Every replica heartbeats every lease_ttl/3; it holds at most ceil(sources / live
 * replicas) source leases, gives surplus back when a replica joins, and picks up free ones.
 *
 * A lease is ours only while renewals succeed: a renewal Redis refuses (someone else holds it) ends it at
 * once, and a process that did not renew for lease_ttl (paused, starved) no longer holds it when it wakes up,
 * before any timer of it can write or send. While Redis cannot be reached at all, leases already held are
 * kept (fail open, contract section 9): the heartbeat keeps running, so it is not a pause.
 */
export class LeaseCoordinator implements Coordinator {
  private readonly held = new Map<string, Held>();
  private readonly mono: () => number;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  private redisUp = true;
  /** Monotonic time of the last heartbeat attempt (answered or not). */
  private lastAttempt: number;
  private live: string[] = [];
  /** The marker this replica saw in Redis; its absence later means Redis lost its data. */
  private epoch: string | undefined;
  /** After Redis came back empty, free leases are left alone for one TTL: their holders put them back first. */
  private acquireAfter = 0;

  constructor(private readonly opts: LeaseCoordinatorOptions) {
    this.mono = opts.monotonic ?? (() => performance.now());
    this.lastAttempt = this.mono();
  }

  private key(name: string): string {
    return `${this.opts.prefix}lease:${name}`;
  }

  private value(name: string): string | undefined {
    const h = this.held.get(name);
    return h ? `${this.opts.replica}#${h.token}` : undefined;
  }

  /** Whether this replica may act on the lease now (and its fencing token), without asking Redis. */
  holds(name: string): boolean {
    const h = this.held.get(name);
    if (!h) return false;
    const now = this.mono();
    if (now < h.validUntil) return true;
    // Redis down but our heartbeats still run: keep the work (fail open). A paused process has not tried lately.
    if (!this.redisUp && now - this.lastAttempt < this.opts.ttlMs / 2) return true;
    // The first to ask after a pause (no heartbeat ran for a whole lease_ttl) learns the lease is gone (see
    // losePaused). Redis merely slow or away is the heartbeat's to judge: the lease is kept, fail open.
    if (now - this.lastAttempt >= this.opts.ttlMs) this.losePaused(name, h, now, this.lastAttempt);
    return false;
  }

  /**
   * A lease past its validity after a pause (no heartbeat ran for a whole lease_ttl): given up at once, and said, before
   * anything the woken process tries to write is refused as fenced — so the log tells the takeover in order.
   */
  private losePaused(name: string, h: Held, now: number, lastBeat: number): void {
    this.lose(name, `expired ${Math.round((now - h.validUntil) / 1000)} s ago: not renewed within lease_ttl (this process was paused: no heartbeat ran for ${Math.round((now - lastBeat) / 1000)} s)`);
  }

  token(name: string): number | undefined {
    return this.holds(name) ? this.held.get(name)?.token : undefined;
  }

  /** The Redis-side check of a fenced step (a send): true while the lease is still ours, or Redis is unreachable. */
  async confirm(name: string): Promise<boolean> {
    if (!this.holds(name)) return false;
    try {
      return (await this.opts.redis.get(this.key(name))) === this.value(name);
    } catch {
      return true; // fail open: a notification is never dropped because coordination is down
    }
  }

  /** The value a Lua script compares the lease key with before a fenced write. */
  fence(name: string): Fence | undefined {
    const value = this.holds(name) ? this.value(name) : undefined;
    return value === undefined ? undefined : { key: this.key(name), value };
  }

  get replicas(): readonly string[] {
    return this.live;
  }

  get leases(): string[] {
    return [...this.held.keys()].filter((n) => this.holds(n));
  }

  get up(): boolean {
    return this.redisUp;
  }

  /** Who holds each lease now, as Redis says (the status page's "which replica polls which source"). */
  async holders(): Promise<Record<string, string | null>> {
    const names = [LEADER_LEASE, ...this.opts.sources.map(sourceLease)];
    const values = await this.opts.redis.mget(...names.map((n) => this.key(n)));
    return Object.fromEntries(names.map((n, i) => [n, values[i]?.split('#')[0] ?? null]));
  }

  async start(): Promise<void> {
    await this.heartbeat();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beating = this.heartbeat().finally(() => {
        this.beating = undefined;
        this.schedule();
      });
    }, Math.max(100, Math.floor(this.opts.ttlMs / 3)));
    this.timer.unref();
  }

  /** One round: register, renew, balance, acquire. Never throws. */
  async heartbeat(): Promise<void> {
    const started = this.mono();
    const lastBeat = this.lastAttempt;
    this.lastAttempt = started;
    // Woken from a pause (the heartbeat did not run for a whole lease_ttl): what expired meanwhile is gone, said now,
    // before the renewals below wait on Redis and the woken timers of the roles try to write.
    if (started - lastBeat >= this.opts.ttlMs) {
      for (const [name, h] of [...this.held]) if (started >= h.validUntil) this.losePaused(name, h, started, lastBeat);
    }
    const { redis, ttlMs, replica, logger } = this.opts;
    try {
      const live = (await redis.eval(HEARTBEAT, 1, `${this.opts.prefix}replicas`, replica, ttlMs)) as string[];
      this.live = [...live].sort();
      this.setRedisUp(true);
    } catch (err) {
      this.setRedisUp(false);
      logger.warn({ leases: [...this.held.keys()], err: redisErrorFields(err) }, 'cannot reach Redis; keeping the leases held (fail open)');
      return;
    }
    if (await this.resetDetected()) {
      this.acquireAfter = started + this.opts.ttlMs;
      await this.reseed();
    }
    // A pause longer than the TTL: everything held may be someone else's now; renewals say which.
    for (const [name] of [...this.held]) await this.renew(name, started);
    await this.balance(started);
  }

  /** Whether Redis lost the data it had at our last heartbeat (restarted without persistence, flushed). */
  private async resetDetected(): Promise<boolean> {
    const key = `${this.opts.prefix}epoch`;
    try {
      const candidate = `${this.opts.replica}@${Date.now()}`;
      await this.opts.redis.set(key, candidate, 'NX');
      const current = await this.opts.redis.get(key);
      const reset = this.epoch !== undefined && current !== this.epoch;
      this.epoch = current ?? undefined;
      return reset;
    } catch {
      return false;
    }
  }

  /**
   * Redis came back empty: put our leases back (with their fencing tokens, and the counters above them, so no
   * later token repeats one) before anything else can take them, then let the daemon write back its state.
   */
  private async reseed(): Promise<void> {
    // Said once it is known what happened: another replica may have noticed first and taken leases back already.
    const restored: string[] = [];
    const takenBy: Record<string, string> = {};
    for (const [name, h] of [...this.held]) {
      try {
        const ok = await this.opts.redis.set(this.key(name), `${this.opts.replica}#${h.token}`, 'PX', this.opts.ttlMs, 'NX');
        const counter = `${this.opts.prefix}fence:${name}`;
        const current = Number((await this.opts.redis.get(counter)) ?? 0);
        if (current < h.token) await this.opts.redis.set(counter, String(h.token));
        if (ok === 'OK') restored.push(name);
        else {
          const holder = (await this.opts.redis.get(this.key(name)))?.split('#')[0] ?? '?';
          takenBy[name] = holder;
        }
      } catch {
        /* the renewals below decide */
      }
    }
    const taken = Object.keys(takenBy);
    this.opts.logger.warn(
      { restored, ...(taken.length > 0 ? { takenBy } : {}) },
      `Redis restarted empty (its data is gone): ${restored.length > 0 ? `restored the leases this replica held (${restored.join(', ')})` : 'no lease of this replica to restore'}${
        taken.length > 0 ? `; ${taken.length} had been taken back by another replica first (${taken.map((n) => `${n}: ${takenBy[n]}`).join(', ')})` : ''
      }; writing back this replica's state`,
    );
    for (const [name, holder] of Object.entries(takenBy)) this.lose(name, `taken by replica ${holder} after Redis restarted empty`);
    this.opts.onRedisReset?.();
  }

  private async renew(name: string, started: number): Promise<void> {
    const value = this.value(name);
    if (value === undefined) return;
    try {
      const ok = await this.opts.redis.eval(RENEW, 1, this.key(name), value, this.opts.ttlMs);
      if (ok === 1) {
        const h = this.held.get(name);
        if (h) h.validUntil = started + this.opts.ttlMs;
      } else {
        const holder = ((await this.opts.redis.get(this.key(name)).catch(() => null)) ?? '').split('#')[0];
        const paused = this.mono() - started > this.opts.ttlMs || (this.held.get(name)?.validUntil ?? 0) < started;
        this.lose(name, holder ? `taken over by replica ${holder}${paused ? ' while this one was paused past the lease' : ''}` : 'expired (not renewed within lease_ttl)');
      }
    } catch (err) {
      this.setRedisUp(false);
      this.opts.logger.warn({ lease: name, role: roleOf(name), err: redisErrorFields(err) }, 'cannot renew a lease; keeping it (fail open)');
    }
  }

  private async balance(started: number): Promise<void> {
    const sources = [...this.opts.sources].sort();
    // Shares by rank among the live replicas (sorted by name, so all agree): the first S mod N take one more.
    // Each holds at most ceil(S/N), a replica that joins gets its share, and the shares add up to S.
    const n = Math.max(1, this.live.length);
    const rank = Math.max(0, this.live.indexOf(this.opts.replica));
    const target = Math.floor(sources.length / n) + (rank < sources.length % n ? 1 : 0);
    const mine = sources.filter((s) => this.held.has(sourceLease(s)));
    // Give surplus back (newest first) so a replica that joined gets its share.
    for (const s of mine.slice(target).reverse()) await this.release(sourceLease(s), `given back to balance the sources over ${n} replicas`);
    let count = Math.min(mine.length, target);
    // Start at a replica-specific offset so replicas do not all race for the same free lease.
    const offset = hashOf(this.opts.replica) % Math.max(1, sources.length);
    for (let i = 0; i < sources.length && count < target; i++) {
      const source = sources[(i + offset) % sources.length];
      if (source === undefined || this.held.has(sourceLease(source))) continue;
      if (await this.acquire(sourceLease(source), started)) count++;
    }
    if (!this.held.has(LEADER_LEASE)) await this.acquire(LEADER_LEASE, started);
  }

  private async acquire(name: string, started: number): Promise<boolean> {
    if (started < this.acquireAfter) return false;
    try {
      const token = Number(await this.opts.redis.eval(ACQUIRE, 2, this.key(name), `${this.opts.prefix}fence:${name}`, this.opts.replica, this.opts.ttlMs));
      if (!token) return false;
      this.held.set(name, { token, validUntil: started + this.opts.ttlMs, acquiredAt: started });
      this.opts.logger.info({ lease: name, role: roleOf(name), fencingToken: token }, 'lease acquired');
      this.opts.onAcquired(name, token);
      return true;
    } catch (err) {
      this.setRedisUp(false);
      this.opts.logger.warn({ lease: name, role: roleOf(name), err: redisErrorFields(err) }, 'cannot acquire a lease');
      return false;
    }
  }

  private async release(name: string, why: string): Promise<void> {
    if (this.value(name) === undefined) return;
    // Finish the lease's work (commit the window being read) while it is still ours, then give it back.
    if (this.opts.onReleasing) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.opts.onReleasing(name).catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.min(RELEASE_GRACE_MS, this.opts.ttlMs / 2));
        }),
      ]);
      clearTimeout(timer);
    }
    const value = this.value(name);
    if (value === undefined) return;
    this.lose(name, why);
    try {
      await this.opts.redis.eval(RELEASE, 1, this.key(name), value);
    } catch {
      /* it expires by itself within lease_ttl */
    }
  }

  private lose(name: string, why: string): void {
    if (!this.held.delete(name)) return;
    this.opts.logger.warn({ lease: name, role: roleOf(name), why }, 'lease no longer held');
    this.opts.onLost(name, why);
  }

  private setRedisUp(up: boolean): void {
    if (up !== this.redisUp) this.opts.logger[up ? 'info' : 'error']({ up, leases: [...this.held.keys()] }, up ? 'Redis reachable again' : 'Redis unreachable');
    this.redisUp = up;
    this.opts.onRedisUp?.(up);
  }

  /** Stop heartbeating and give every lease back, so others take over at once instead of after the TTL. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.beating;
    for (const name of [...this.held.keys()]) await this.release(name, 'given back at shutdown');
    try {
      await this.opts.redis.zrem(`${this.opts.prefix}replicas`, this.opts.replica);
    } catch {
      /* expires by itself */
    }
  }
}

function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
