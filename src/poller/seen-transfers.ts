/**
 * Identities of the transfers a stream has already handed on, kept only as far back as a re-fetch can reach
 * (the overlap before the cursor), so memory is bounded by the overlap, not by history.
 */
export class SeenTransfers {
  private readonly times = new Map<string, number>();

  /** True (and remembered) the first time an id is offered; false for a repeat. */
  add(id: string, time: number): boolean {
    if (this.times.has(id)) return false;
    this.times.set(id, time);
    return true;
  }

  has(id: string): boolean {
    return this.times.has(id);
  }

  /** Forget ids of transfers that happened before `before`: no future window reaches back that far. */
  prune(before: number): void {
    for (const [id, time] of this.times) {
      if (time < before) this.times.delete(id);
    }
  }

  get size(): number {
    return this.times.size;
  }

  toJSON(): Array<[string, number]> {
    return [...this.times];
  }

  static from(entries: Iterable<[string, number]>): SeenTransfers {
    const seen = new SeenTransfers();
    for (const [id, time] of entries) seen.times.set(id, time);
    return seen;
  }
}
