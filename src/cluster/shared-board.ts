/** Where a board's entries live when several replicas share them (Redis); absent for a cluster of one. */
export interface BoardRemote {
  /** Write this replica's entries (JSON), each kept for `ttlMs` unless written again. */
  write(entries: ReadonlyMap<string, string>, ttlMs: number): Promise<void>;
  /** Remove an entry this replica no longer publishes. */
  remove(key: string): Promise<void>;
  read(keys: readonly string[]): Promise<Map<string, string>>;
}

/**
 * What each replica shows the others, so every replica's page and API serve the same picture: the role that
 * knows a thing publishes it under a key (a source's poller its streams, the leader its expectations and
 * sends), and the view reads it by key. A published entry is read live in its own process; with a remote, it
 * is also written there every interval (with a TTL, so a dead replica's entries vanish) and other replicas'
 * entries are read back on the same beat.
 */
export class SharedBoard {
  private readonly own = new Map<string, () => unknown>();
  private readonly others = new Map<string, unknown>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly opts: {
      remote?: BoardRemote;
      /** How often entries are written and read back (remote only). */
      intervalMs?: number;
      /** How long a written entry outlives its last write. */
      ttlMs?: number;
    } = {},
  ) {}

  publish(key: string, value: () => unknown): void {
    this.own.set(key, value);
  }

  withdraw(key: string): void {
    if (!this.own.delete(key)) return;
    this.others.delete(key);
    void this.opts.remote?.remove(key).catch(() => undefined);
  }

  /** The entry under `key`: this process's own (live), or the last one read from the other replicas. */
  get(key: string): unknown {
    const mine = this.own.get(key);
    return mine ? mine() : this.others.get(key);
  }

  /** Begin writing and reading entries (no-op without a remote); `keys` lists what the view asks for. */
  start(keys: () => readonly string[]): void {
    const remote = this.opts.remote;
    if (!remote || this.timer) return;
    const beat = (): void => {
      this.syncing = this.sync(remote, keys()).finally(() => {
        this.syncing = undefined;
      });
    };
    beat();
    this.timer = setInterval(beat, this.opts.intervalMs ?? 1_000);
    this.timer.unref();
  }

  private async sync(remote: BoardRemote, keys: readonly string[]): Promise<void> {
    try {
      const mine = new Map<string, string>();
      for (const [key, value] of this.own) mine.set(key, JSON.stringify(value()));
      await remote.write(mine, this.opts.ttlMs ?? 10_000);
      const wanted = keys.filter((k) => !this.own.has(k));
      const read = await remote.read(wanted);
      for (const key of wanted) {
        const text = read.get(key);
        if (text === undefined) {
          this.others.delete(key);
          continue;
        }
        try {
          this.others.set(key, JSON.parse(text) as unknown);
        } catch {
          this.others.delete(key);
        }
      }
    } catch {
      /* the store is down: keep the last entries read; the coordination alert says so */
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.syncing;
  }
}
