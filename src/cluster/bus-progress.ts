import type { StreamProgress } from './transfer-bus.js';

/**
 * The leader's view of how far each source's history is read, built from the progress markers in the transfer
 * stream as it consumes them (never ahead of the transfers it has seen): the same questions the local poller
 * answers on a single node (data completeness for deadlines, last healthy poll for TransferWatchSourceDown).
 */
export class BusProgress {
  private readonly streams = new Map<string, StreamProgress>();
  /** Per source, a span the SLA backfill read whole and handed on (see `adoptRead`). */
  private readonly adopted = new Map<string, { from: number; until: number }>();

  constructor(
    /** The streams every source has (kinds × instances), so a stream never reported counts as unread. */
    private expected: ReadonlyMap<string, ReadonlyArray<{ stream: string; result: 'success' | 'error' }>>,
    /** When this replica became leader: a source is not reported down before it had stale_after to report. */
    private readonly since: number,
  ) {}

  /** The sources or their streams changed (a reload on a cluster of one): what is known of the others is kept. */
  setExpected(expected: ReadonlyMap<string, ReadonlyArray<{ stream: string; result: 'success' | 'error' }>>): void {
    this.expected = expected;
  }

  apply(progress: readonly StreamProgress[]): void {
    for (const p of progress) this.streams.set(p.stream, p);
  }

  /** Seed from the cursors saved in Redis (a new leader, before it reads the stream). */
  seed(progress: readonly StreamProgress[]): void {
    for (const p of progress) if (!this.streams.has(p.stream)) this.streams.set(p.stream, p);
  }

  /**
   * Up to when every stream of that result kind is read, for rules that judge whole data. Undefined while one of
   * them is still reading its way to the present (first start, restart, catch-up): a span that ends hours behind
   * the clock would be judged as if it were now, and an alert fired on it resolved a moment later.
   */
  completeUntil(source: string, result: 'success' | 'error'): number | undefined {
    let min: number | undefined;
    for (const s of this.expected.get(source) ?? []) {
      if (s.result !== result) continue;
      const stream = this.streams.get(s.stream);
      const cursor = stream?.cursor;
      if (cursor === undefined || stream?.catchingUp === true) return undefined;
      min = min === undefined ? cursor : Math.min(min, cursor);
    }
    return min;
  }

  completeFrom(source: string, result: 'success' | 'error'): number | undefined {
    let max: number | undefined;
    for (const s of this.expected.get(source) ?? []) {
      if (s.result !== result) continue;
      const since = this.streams.get(s.stream)?.since;
      if (since === undefined) return undefined;
      max = max === undefined ? since : Math.max(max, since);
    }
    // The backfill's span joins the polled one without a gap: the history is read whole from its start.
    const adopted = this.adopted.get(source);
    return max !== undefined && adopted !== undefined && adopted.until >= max ? Math.min(max, adopted.from) : max;
  }

  /**
   * A source's history read whole over [from, until] by the SLA backfill, whose transfers the leader's rules were
   * given: the deadlines whose windows began before the first poll (a first start) are judged on it.
   */
  adoptRead(source: string, from: number, until: number): void {
    this.adopted.set(source, { from, until });
  }

  lastHealthy(source: string): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const s of this.expected.get(source) ?? []) oldest = Math.min(oldest, Math.max(this.streams.get(s.stream)?.lastSuccess ?? 0, this.since));
    return Number.isFinite(oldest) ? oldest : this.since;
  }
}
