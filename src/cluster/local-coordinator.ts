import { LEADER_LEASE, sourceLease, type ClusterEvents, type Coordinator, type Fence } from './cluster.js';

/**
 * The coordinator of a cluster of one: every lease is this process's. The leader lease is granted first and
 * its takeover (rule windows rebuilt from history, first evaluation) awaited before the sources' leases, so
 * polling starts on rules that are ready, as a replica that takes over a running cluster does. Sources added
 * or removed by a reload are granted or given back like a rebalance.
 */
export class LocalCoordinator implements Coordinator {
  private readonly held = new Map<string, number>();
  private token = 0;
  private stopped = false;

  constructor(
    private readonly opts: {
      replica: string;
      sources: readonly string[];
      events: Pick<ClusterEvents, 'onLeaseAcquired' | 'onLeaseReleasing' | 'onLeaseLost'>;
    },
  ) {}

  private sources: readonly string[] = [];

  async start(): Promise<void> {
    await this.grant(LEADER_LEASE);
    await this.setSources(this.opts.sources);
  }

  /** The sources to poll changed (a reload): give back the leases of the removed ones, take the new ones. */
  async setSources(sources: readonly string[]): Promise<void> {
    const next = new Set(sources.map(sourceLease));
    for (const lease of [...this.held.keys()]) if (lease !== LEADER_LEASE && !next.has(lease)) await this.release(lease, 'its source was removed');
    this.sources = sources;
    for (const lease of next) if (!this.held.has(lease)) await this.grant(lease);
  }

  private async grant(lease: string): Promise<void> {
    if (this.stopped) return;
    this.token += 1;
    this.held.set(lease, this.token);
    await this.opts.events.onLeaseAcquired(lease);
  }

  private async release(lease: string, why: string): Promise<void> {
    if (!this.held.has(lease)) return;
    await this.opts.events.onLeaseReleasing(lease);
    this.held.delete(lease);
    this.opts.events.onLeaseLost(lease, why);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const lease of [...this.held.keys()].reverse()) await this.release(lease, 'given back at shutdown');
  }

  holds(lease: string): boolean {
    return this.held.has(lease);
  }

  confirm(lease: string): Promise<boolean> {
    return Promise.resolve(this.holds(lease));
  }

  fence(lease: string): Fence | undefined {
    const token = this.held.get(lease);
    return token === undefined ? undefined : { key: lease, value: `${this.opts.replica}#${token}` };
  }

  holders(): Promise<Record<string, string | null>> {
    const names = [LEADER_LEASE, ...this.sources.map(sourceLease)];
    return Promise.resolve(Object.fromEntries(names.map((n) => [n, this.held.has(n) ? this.opts.replica : null])));
  }

  get up(): boolean {
    return true;
  }

  get replicas(): readonly string[] {
    return [this.opts.replica];
  }
}
