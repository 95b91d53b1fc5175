import { hash64 } from './hash64.js';
import { slotOf, slotsFor } from './hash-slots.js';

/** What `SeenTransfers.toJSON` saves: base64 of the 64-bit keys (big-endian) and of the stored times (uint32). */
export interface SeenSnapshot {
  keys: string;
  times: string;
}

/**
 * Transfer ids, each with a time, forgotten by time: what the poller has already handed on, and what the rule
 * engine's rules still hold. Memory is bounded by how far back those reach, not by history.
 *
 * The poller keeps a window's ids until the window is committed (an abandoned window is fetched again whole, and
 * what it already handed on must not be handed on twice), and a catch-up window can hold hundreds of thousands
 * of transfers; the rule engine keeps every id a rule holds for as long as that rule's window (a day, for a
 * duplicate-file rule). So ids are kept compactly: an open-addressing table of 64-bit keys in typed
 * arrays (12 bytes a slot, nothing for the garbage collector to trace) instead of a Map of id strings
 * (about 150 bytes an entry). Times are kept to the second, rounded down: pruning then keeps an id up to a
 * second longer than asked, which only ever refuses the same transfer again. A key is the first 64 bits of the
 * id when the id is hex (transfer ids are 16 hex digits of a finalised 64-bit hash, and those of earlier versions
 * and of unreadable records the hex of a SHA-256: uniformly distributed either way), else a 64-bit hash of
 * it; two different transfers share a key with probability about n²/2⁶⁵ (below 10⁻⁸ for a million ids).
 */
export class SeenTransfers {
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** Occurrence time per slot, as `storedSecond`; 0 marks an empty slot. */
  private times: Uint32Array;
  /** Ids held, those still in `moving` included. */
  private count = 0;
  /** The most ids held at a prune, halved at every later prune: what the table is kept large enough for. */
  private recentPeak = 0;
  /**
   * The table before the last growth, while its entries are moved into the new one a few slots per `add` or
   * `has` (from slot `next` on); a lookup meanwhile looks in both. Moving them all at once held the event loop
   * 13 ms at 367,000 ids and 27 ms at 734,000 (the tables of a catch-up window), and a scrape meanwhile waited.
   */
  private moving: { hi: Uint32Array; lo: Uint32Array; times: Uint32Array; next: number } | undefined;

  constructor(capacity = MIN_SLOTS) {
    const slots = slotsFor(capacity, MIN_SLOTS);
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.times = new Uint32Array(slots);
  }

  /** True (and remembered) the first time an id is offered; false for a repeat. */
  add(id: string, time: number): boolean {
    setKey(id);
    return this.insert(key.hi, key.lo, storedSecond(time));
  }

  has(id: string): boolean {
    setKey(id);
    this.moveSome(MOVE_STEP);
    const { moving } = this;
    return findIn(this.hi, this.lo, this.times, key.hi, key.lo) >= 0 || (moving !== undefined && findIn(moving.hi, moving.lo, moving.times, key.hi, key.lo) >= 0);
  }

  /**
   * Forget ids whose time is before `before` (for the poller, no future window reaches back that far; for the
   * rule engine, no rule can still count them).
   *
   * In place, so pruning allocates nothing: rebuilding into a fresh table after each window of a backfill left a
   * discarded table (up to 12 MB for a 600,000-record window, and the tables of its doublings) for every window,
   * freed only by a full GC, which V8 holds back until about 64 MB of such buffers have piled up. The table keeps
   * the size its busiest recent period needed and shrinks once it has held much less for a few prunes.
   *
   * One pass over the slots: an expired entry is emptied where it is, and a live one after such a hole in its run
   * of slots is put back from its home slot (it can only move back, into a hole). Deleting entries one at a time,
   * each shifting back the rest of its run, walked a run again per deletion: the poller's prune after committing an
   * hour's window of a dense backfill (580,000 of 600,000 ids forgotten, 1M slots) took 16.5 ms, 7.6 ms this way,
   * and a scrape meanwhile waits for it.
   */
  prune(before: number): void {
    // One table to walk (what is left to move is at most what the walk costs anyway).
    this.moveSome(Infinity);
    const first = storedSecond(before);
    this.recentPeak = Math.max(this.count, Math.floor(this.recentPeak / 2));
    const { hi, lo, times } = this;
    const slots = times.length;
    const mask = slots - 1;
    // Start at an empty slot (there is one: the load stays below MAX_LOAD): no run of slots wraps past it, so each
    // run is walked from its first slot, and a slot not yet walked is as it was.
    let start = 0;
    while (times[start] !== EMPTY) start++;
    let holes = false;
    for (let step = 1; step <= slots; step++) {
      const i = (start + step) & mask;
      const stored = times[i] as number;
      if (stored === EMPTY) {
        holes = false; // the run ended as it was: the next one starts whole
      } else if (stored < first) {
        times[i] = EMPTY;
        this.count--;
        holes = true;
      } else if (holes) {
        // A hole may now lie between this entry's home and it, where a lookup would stop: put it back from its
        // home, into the first empty slot (at the latest, its own, emptied here).
        times[i] = EMPTY;
        this.place(hi[i] as number, lo[i] as number, stored);
      }
    }
    const target = slotsFor(this.recentPeak, MIN_SLOTS);
    if (target * SHRINK_FACTOR <= slots) this.shrink(target);
  }

  get size(): number {
    return this.count;
  }

  /** Slots in the table (12 bytes each), the one still being moved from included: what it costs in memory. */
  get capacity(): number {
    return this.times.length + (this.moving?.times.length ?? 0);
  }

  /**
   * The ids and times as two base64 strings (8 bytes of key and 4 of stored time per id): a snapshot is saved at
   * every committed window, and the overlap of a dense backfill holds tens of thousands of ids. As [id, time]
   * pairs each save built an array, a 16-character string and a heap number per id (three copies alive at once
   * peaked the million-record first start about 100 MB higher); as two strings it builds two.
   */
  toJSON(): SeenSnapshot {
    this.moveSome(Infinity);
    return writeSeenSnapshot(this.count, (put) => {
      for (let i = 0; i < this.times.length; i++) {
        const stored = this.times[i] as number;
        if (stored !== EMPTY) put(this.hi[i] as number, this.lo[i] as number, stored);
      }
    });
  }

  /** A `toJSON` snapshot, or the [id, time] pairs older versions saved; anything unreadable is an empty set. */
  static from(snapshot: unknown): SeenTransfers {
    const entries = readSeenSnapshot(snapshot);
    const seen = new SeenTransfers(entries.count);
    entries.forEach(
      (id, time) => seen.add(id, time),
      (hi, lo, stored) => seen.insert(hi, lo, stored),
    );
    return seen;
  }

  private insert(hi: number, lo: number, stored: number): boolean {
    this.moveSome(MOVE_STEP);
    const { hi: his, lo: los, times } = this;
    const mask = times.length - 1;
    let i = slotOf(hi, lo, times.length);
    for (; times[i] !== EMPTY; i = (i + 1) & mask) {
      if (los[i] === lo && his[i] === hi) return false;
    }
    const { moving } = this;
    if (moving !== undefined && findIn(moving.hi, moving.lo, moving.times, hi, lo) >= 0) return false;
    his[i] = hi;
    los[i] = lo;
    times[i] = stored;
    this.count++;
    if (this.count > times.length * MAX_LOAD) this.grow();
    return true;
  }

  /**
   * Twice the slots: a new table, which the old one's entries are moved into bit by bit (`moveSome`). They are all
   * moved before the new table could fill: it starts at most half as full as the old one was, and each add moves
   * MOVE_STEP slots.
   */
  private grow(): void {
    this.moveSome(Infinity); // (an earlier growth not done moving: never seen, as said above)
    const slots = this.times.length * 2;
    this.moving = { hi: this.hi, lo: this.lo, times: this.times, next: 0 };
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.times = new Uint32Array(slots);
  }

  /** Up to `slots` slots of the table being moved, into the current one (an add puts a key in one of them only). */
  private moveSome(slots: number): void {
    const moving = this.moving;
    if (moving === undefined) return;
    const end = Math.min(moving.times.length, moving.next + slots);
    for (let from = moving.next; from < end; from++) {
      const stored = moving.times[from] as number;
      if (stored !== EMPTY) this.place(moving.hi[from] as number, moving.lo[from] as number, stored);
    }
    moving.next = end;
    if (end === moving.times.length) this.moving = undefined;
  }

  /** A key known to be in neither table, into the first empty slot from its home in the current one. */
  private place(hi: number, lo: number, stored: number): void {
    const { times } = this;
    const mask = times.length - 1;
    let i = slotOf(hi, lo, times.length);
    while (times[i] !== EMPTY) i = (i + 1) & mask;
    this.hi[i] = hi;
    this.lo[i] = lo;
    times[i] = stored;
  }

  /** A smaller table for `expected` entries, moved into at once (a prune left few: it costs a walk of the old one). */
  private shrink(expected: number): void {
    const { hi, lo, times } = this;
    const slots = slotsFor(expected, MIN_SLOTS);
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.times = new Uint32Array(slots);
    this.moving = { hi, lo, times, next: 0 };
    this.moveSome(Infinity);
  }
}

/** The slot of a key in a table (its three arrays), or -1. */
function findIn(his: Uint32Array, los: Uint32Array, times: Uint32Array, hi: number, lo: number): number {
  const mask = times.length - 1;
  for (let i = slotOf(hi, lo, times.length); ; i = (i + 1) & mask) {
    if (times[i] === EMPTY) return -1;
    if (los[i] === lo && his[i] === hi) return i;
  }
}

/** Gives each entry of a table: its key's halves and its stored time (`storedSecond`). */
type EntryPut = (hi: number, lo: number, stored: number) => void;

/**
 * The snapshot of a table of `count` ids, which `each` gives one by one: the form every table of transfer ids saves
 * (SeenTransfers, TimedIds), so that each reads what the other saved.
 */
export function writeSeenSnapshot(count: number, each: (put: EntryPut) => void): SeenSnapshot {
  const keys = Buffer.allocUnsafe(count * 8);
  const times = Buffer.allocUnsafe(count * 4);
  let n = 0;
  each((hi, lo, stored) => {
    keys.writeUInt32BE(hi, n * 8);
    keys.writeUInt32BE(lo, n * 8 + 4);
    times.writeUInt32BE(stored, n * 4);
    n++;
  });
  return { keys: keys.toString('base64', 0, n * 8), times: times.toString('base64', 0, n * 4) };
}

/**
 * The entries of a saved snapshot: as `writeSeenSnapshot` writes them (given as keys and stored times), or the
 * [id, time] pairs older versions saved (given as such); `count` of them, to make room first. Anything unreadable
 * holds none.
 */
export function readSeenSnapshot(snapshot: unknown): { count: number; forEach(pair: (id: string, time: number) => void, entry: EntryPut): void } {
  if (Array.isArray(snapshot)) {
    const pairs = snapshot.filter((e): e is [string, number] => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'number');
    return { count: pairs.length, forEach: (pair) => pairs.forEach(([id, time]) => pair(id, time)) };
  }
  const s = snapshot as { keys?: unknown; times?: unknown } | null;
  if (!s || typeof s.keys !== 'string' || typeof s.times !== 'string') return { count: 0, forEach: () => undefined };
  const keys = Buffer.from(s.keys, 'base64');
  const times = Buffer.from(s.times, 'base64');
  const n = Math.min(Math.floor(keys.length / 8), Math.floor(times.length / 4));
  return {
    count: n,
    forEach: (_pair, entry) => {
      for (let i = 0; i < n; i++) {
        const stored = times.readUInt32BE(i * 4);
        if (stored !== EMPTY) entry(keys.readUInt32BE(i * 8), keys.readUInt32BE(i * 8 + 4), stored);
      }
    },
  };
}

/**
 * Slots of the table being moved that each `add` or `has` moves. A table grows at 0.7 of its S slots full; the new
 * one (2S) fills after 0.7S more adds, and the old one is all moved after S/8: within a fifth of them.
 */
const MOVE_STEP = 8;
const MIN_SLOTS = 1024;
const EMPTY = 0;
const MAX_STORED = 0xffffffff;

/** A time as kept in a slot: whole seconds since 1970 plus one (0 is an empty slot), clamped to what 32 bits hold. */
export function storedSecond(time: number): number {
  return Math.min(MAX_STORED, Math.max(1, Math.floor(time / 1000) + 1));
}
const MAX_LOAD = 0.7;
/** Shrink when the table is this many times the size the recent peak needs (hysteresis against regrowing). */
const SHRINK_FACTOR = 4;
/**
 * The key of the id last given to `setKey`. One shared pair instead of an array per call: a key is computed two
 * or three times per transfer (the poller's table, the rule engine's), and the tuple, the regex test and the
 * two `parseInt` of slices were a twentieth of a backfill's time. Read at once, before the next `setKey`. `of` is
 * the id it was read from.
 */
const key: { hi: number; lo: number; of: string | undefined } = { hi: 0, lo: 0, of: undefined };

/**
 * The 64-bit key of an id (see SeenTransfers): the shared pair, to be read at once, before the next call of this
 * or of any SeenTransfers method.
 */
export function idKey(id: string): { readonly hi: number; readonly lo: number } {
  setKey(id);
  return key;
}

/** The first 64 bits of a hex id (case-insensitive), else a 64-bit hash of the id, into `key`. */
function setKey(id: string): void {
  // The rule engine asks `has` and then `add` for the same transfer: its key is read once.
  if (id === key.of) return;
  key.of = id;
  if (id.length >= 16) {
    // Each half's eight digits read through a table, one test a half instead of a branch a digit.
    const hi = hexHalf(id, 0);
    const lo = hexHalf(id, 8);
    if (hi >= 0 && lo >= 0) {
      key.hi = hi;
      key.lo = lo;
      return;
    }
  }
  const [hi, lo] = hash64(id);
  key.hi = hi;
  key.lo = lo;
}

/** The value of the eight hex digits at `at`, or -1 when one is not a hex digit. */
function hexHalf(id: string, at: number): number {
  // Read as an array: a code past the table (128 and up) reads undefined, taken as -1 like any other non-digit.
  const v = HEX_VALUE as unknown as number[];
  let x = 0;
  let bad = 0;
  for (let i = at; i < at + 8; i++) {
    const d = v[id.charCodeAt(i)] ?? -1;
    bad |= d;
    x = x * 16 + d;
  }
  return bad < 0 ? -1 : x;
}

/** A character code's value as a hex digit (0-9, a-f, A-F), -1 for any other code below 128. */
const HEX_VALUE = Int8Array.from({ length: 128 }, (_, c) => {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
});
