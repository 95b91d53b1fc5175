/**
 * Occurrence times kept sorted for rules that only count: each distinct time once, with a running total of the
 * occurrences up to it, in one array of unboxed doubles (time and total side by side; see `doubles`). 16 bytes per
 * distinct time (times of the same millisecond share an entry) and nothing for the garbage collector to trace, where
 * a list of `{ time }` objects cost ~40 bytes per transfer. Counting a window is two binary searches. One array,
 * not one for times and one for totals, and room for 4 entries to start with: an `error_burst` grouped by file makes
 * a table per failure (each file is its own group), and the second array and its buffer were most of what each one
 * cost.
 *
 * `resolution` rounds every time up to a multiple of it: 1 (the default) keeps times exact, so counts are the
 * same as with the full list; a coarser one bounds the entries by the span covered instead of by the traffic, at
 * the price of window edges rounded to it: a second for a volume window (the same counts for whole-second
 * timestamps), a minute for a volume rule's week-old baseline. Rounding up, a transfer is never counted before
 * its time, and leaves a window at most `resolution` late.
 */
export class TimeCounts {
  /**
   * Entry i is at 2i and 2i + 1: its distinct time (ascending over [head, tail)) and the occurrences at or before
   * it, counted from entry 0 (dropped entries included).
   */
  private data: number[] | Float64Array;
  private head = 0;
  private tail = 0;

  constructor(
    private readonly resolution = 1,
    capacity = 4,
  ) {
    this.data = doubles(capacity * 2);
  }

  /** Entries the array has room for. */
  private get capacity(): number {
    return this.data.length >> 1;
  }

  private timeAt(i: number): number {
    return this.data[2 * i] as number;
  }

  private totalAt(i: number): number {
    return this.data[2 * i + 1] as number;
  }

  /** Occurrences held (not yet dropped). */
  get size(): number {
    return this.tail === this.head ? 0 : this.totalAt(this.tail - 1) - this.totalBefore(this.head);
  }

  /** Distinct times held: what the memory is (16 bytes each). */
  get entries(): number {
    return this.tail - this.head;
  }

  /** The latest time held (rounded to the resolution), if any. */
  get latest(): number | undefined {
    return this.tail === this.head ? undefined : this.timeAt(this.tail - 1);
  }

  /** The earliest time held (rounded to the resolution), if any. */
  get earliest(): number | undefined {
    return this.tail === this.head ? undefined : this.timeAt(this.head);
  }

  add(time: number, n = 1): void {
    const t = this.resolution === 1 ? time : Math.ceil(time / this.resolution) * this.resolution;
    const last = this.tail - 1;
    if (last >= this.head && this.timeAt(last) === t) {
      (this.data[2 * last + 1] as number) += n;
      return;
    }
    if (last < this.head || this.timeAt(last) < t) {
      this.makeRoom();
      this.data[2 * this.tail] = t;
      this.data[2 * this.tail + 1] = this.totalBefore(this.tail) + n;
      this.tail++;
      return;
    }
    // Late records are rare: insert in place, and every later running total grows by n.
    let at = this.firstAtOrAfter(t);
    if (this.timeAt(at) !== t) {
      this.makeRoom();
      at = this.firstAtOrAfter(t); // making room may have moved the entries
      this.data.copyWithin(2 * (at + 1), 2 * at, 2 * this.tail);
      this.data[2 * at] = t;
      this.data[2 * at + 1] = this.totalBefore(at);
      this.tail++;
    }
    for (let j = at; j < this.tail; j++) (this.data[2 * j + 1] as number) += n;
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
    if (this.capacity > 64 && live * 8 < this.capacity) this.reallocate(Math.max(8, live * 2));
  }

  /** Running total before index i (the occurrences of the entries before it, dropped ones included). */
  private totalBefore(i: number): number {
    return i === 0 ? 0 : this.totalAt(i - 1);
  }

  /** Index of the first entry after `time` (tail if none). */
  private firstAfter(time: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timeAt(mid) <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private firstAtOrAfter(time: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timeAt(mid) < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Room for one more entry at the tail: move the live entries to the front when half is dropped, else grow. */
  private makeRoom(): void {
    const capacity = this.capacity;
    if (this.tail < capacity) return;
    const live = this.tail - this.head;
    this.reallocate(live * 2 <= capacity ? capacity : capacity * 2);
  }

  /** Move the live entries to index 0 of an array for `capacity` entries, running totals rebased to start there. */
  private reallocate(capacity: number): void {
    const live = this.tail - this.head;
    const base = this.totalBefore(this.head);
    const from = this.data;
    const data = capacity === this.capacity ? from : doubles(capacity * 2);
    const start = 2 * this.head;
    for (let i = 0; i < live; i++) {
      data[2 * i] = from[start + 2 * i] as number;
      data[2 * i + 1] = (from[start + 2 * i + 1] as number) - base;
    }
    this.data = data;
    this.head = 0;
    this.tail = live;
  }
}

/**
 * Tables of up to this many entries are plain arrays of doubles, larger ones Float64Arrays. A plain array of doubles is
 * kept unboxed in one block that the garbage collector does not trace, as a typed array is, and is allocated several
 * times faster: a typed array of 8 doubles cost ~300 ns on Node 20, and `error_burst` grouped by file makes one per
 * failure. It also takes less memory when small (120 bytes against 272 for 8). Large tables stay off the V8 heap, as
 * they were: all plain, the shipped rules' backfill peaked ~5 MB higher on Node 24 as the image starts it.
 */
const SMALL_TABLE = 32;

/**
 * A table's block of `n` doubles (see SMALL_TABLE); a plain one filled to size at once (grown by push, it came out up
 * to a third larger), with 0.5 rather than 0: filled with a small integer V8 makes the block one of tagged values
 * (SMI elements), and the first time stored would copy it into a block of doubles.
 */
function doubles(n: number): number[] | Float64Array {
  return n <= 2 * SMALL_TABLE ? new Array<number>(n).fill(0.5) : new Float64Array(n);
}
