/**
 * Occurrence times kept sorted for rules that only count: each distinct time once, with a running total of the
 * occurrences up to it, in typed arrays. 16 bytes per distinct time (times of the same millisecond share an
 * entry) and nothing for the garbage collector to trace, where a list of `{ time }` objects cost ~40 bytes per
 * transfer. Counting a window is two binary searches.
 *
 * `resolution` rounds every time up to a multiple of it: 1 (the default) keeps times exact, so counts are the
 * same as with the full list; a coarser one bounds the entries by the span covered instead of by the traffic, at
 * the price of window edges rounded to it: a second for a volume window (the same counts for whole-second
 * timestamps), a minute for a volume rule's week-old baseline. Rounding up, a transfer is never counted before
 * its time, and leaves a window at most `resolution` late.
 */
export class TimeCounts {
  /** Distinct times, ascending, in [head, tail). */
  private times: Float64Array;
  /** Occurrences at or before each entry, counted from index 0 of the arrays (dropped entries included). */
  private totals: Float64Array;
  private head = 0;
  private tail = 0;

  constructor(
    private readonly resolution = 1,
    capacity = 8,
  ) {
    this.times = new Float64Array(capacity);
    this.totals = new Float64Array(capacity);
  }

  /** Occurrences held (not yet dropped). */
  get size(): number {
    return this.tail === this.head ? 0 : (this.totals[this.tail - 1] as number) - this.totalBefore(this.head);
  }

  /** Distinct times held: what the memory is (16 bytes each). */
  get entries(): number {
    return this.tail - this.head;
  }

  /** The latest time held (rounded to the resolution), if any. */
  get latest(): number | undefined {
    return this.tail === this.head ? undefined : this.times[this.tail - 1];
  }

  /** The earliest time held (rounded to the resolution), if any. */
  get earliest(): number | undefined {
    return this.tail === this.head ? undefined : this.times[this.head];
  }

  add(time: number, n = 1): void {
    const t = this.resolution === 1 ? time : Math.ceil(time / this.resolution) * this.resolution;
    const last = this.tail - 1;
    if (last >= this.head && (this.times[last] as number) === t) {
      (this.totals[last] as number) += n;
      return;
    }
    if (last < this.head || (this.times[last] as number) < t) {
      this.makeRoom();
      this.times[this.tail] = t;
      this.totals[this.tail] = this.totalBefore(this.tail) + n;
      this.tail++;
      return;
    }
    // Late records are rare: insert in place, and every later running total grows by n.
    let at = this.firstAtOrAfter(t);
    if ((this.times[at] as number) !== t) {
      this.makeRoom();
      at = this.firstAtOrAfter(t); // making room may have moved the entries
      this.times.copyWithin(at + 1, at, this.tail);
      this.totals.copyWithin(at + 1, at, this.tail);
      this.times[at] = t;
      this.totals[at] = this.totalBefore(at);
      this.tail++;
    }
    for (let j = at; j < this.tail; j++) (this.totals[j] as number) += n;
  }

  /** Occurrences with time in (from, to]. */
  countIn(from: number, to: number): number {
    if (to <= from) return 0;
    return this.totalBefore(this.firstAfter(to)) - this.totalBefore(this.firstAfter(from));
  }

  /** Occurrences with time after `time`. */
  countAfter(time: number): number {
    return this.totalBefore(this.tail) - this.totalBefore(this.firstAfter(time));
  }

  /** Forget the times at or before `time`. */
  dropUpTo(time: number): void {
    this.head = this.firstAfter(time);
    const live = this.tail - this.head;
    // Give memory back after a busy period: a table 8 times larger than what it holds shrinks to twice that.
    if (this.times.length > 64 && live * 8 < this.times.length) this.reallocate(Math.max(8, live * 2));
  }

  /** Running total before index i (the occurrences of the entries before it, dropped ones included). */
  private totalBefore(i: number): number {
    return i === 0 ? 0 : (this.totals[i - 1] as number);
  }

  /** Index of the first entry after `time` (tail if none). */
  private firstAfter(time: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private firstAtOrAfter(time: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Room for one more entry at the tail: move the live entries to the front when half is dropped, else grow. */
  private makeRoom(): void {
    if (this.tail < this.times.length) return;
    const live = this.tail - this.head;
    this.reallocate(live * 2 <= this.times.length ? this.times.length : this.times.length * 2);
  }

  /** Move the live entries to index 0 of arrays of `capacity`, running totals rebased to start there. */
  private reallocate(capacity: number): void {
    const live = this.tail - this.head;
    const base = this.totalBefore(this.head);
    const times = capacity === this.times.length ? this.times : new Float64Array(capacity);
    const totals = capacity === this.totals.length ? this.totals : new Float64Array(capacity);
    times.set(this.times.subarray(this.head, this.tail), 0);
    for (let i = 0; i < live; i++) totals[i] = (this.totals[this.head + i] as number) - base;
    this.times = times;
    this.totals = totals;
    this.head = 0;
    this.tail = live;
  }
}
