/**
 * A bounded memory of the transfer ids already counted. The poller deduplicates overlapping windows
 * itself; this is the metrics' own guarantee that a transfer handed over twice is still counted once.
 * Oldest ids are forgotten first, which is safe because overlapping windows repeat recent records only.
 */
export class SeenTransfers {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  /** True the first time an id is offered (and remembers it), false on a repeat. */
  firstTime(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      // A Set iterates in insertion order, so the first entry is the oldest.
      const oldest = this.ids.values().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
    return true;
  }

  get size(): number {
    return this.ids.size;
  }
}
