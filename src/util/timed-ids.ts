import { slotOf, slotsFor } from './hash-slots.js';
import { idKey, readSeenSnapshot, storedSecond, writeSeenSnapshot, type SeenSnapshot } from './seen-transfers.js';

/**
 * Ids that always come with the same time, kept by that time to the second: what a poll stream has handed on
 * (a transfer's id is a hash of its fields, its time among them, so a repeat of a transfer comes with its time).
 * Same answers as SeenTransfers for such ids, and the same snapshot, but one small table per second instead of one
 * table for all: a stream reads its transfers in time order, so the table a lookup needs is the one the last
 * lookup used, in the CPU's cache, where a window of 194,000 ids made SeenTransfers a 6 MB table and every lookup a
 * wait for memory (6–8% of the 10- and 100-rule bench pipelines). Forgetting by time drops whole seconds.
 *
 * A second's table holds 64-bit keys side by side (8 bytes a slot, at most three quarters full: the second is the
 * key's time); the key 0 marks an empty slot, so an id whose key is 0 is kept as 1 (as likely to collide as any
 * other). Three quarters, not the half of SeenTransfers: a catch-up window of an hour holds every id it read
 * (600,000 in the shipped-rules bench), and at half load a second of ~170 ids took 512 slots (4 KB) where 256 do;
 * a second's table is 2 KB, in the CPU's cache, so the longer probes of a fuller table cost little.
 */
export class TimedIds {
  private readonly seconds = new Map<number, SecondIds>();
  /** The second of the last lookup and its table: the next one is very likely the same. */
  private lastSecond = -1;
  private last: SecondIds | undefined;
  private count = 0;

  /** True (and remembered) the first time an id is offered; false for a repeat. */
  add(id: string, time: number): boolean {
    const { hi, lo } = idKey(id);
    return this.insert(hi, lo, storedSecond(time));
  }

  /** Forget the ids whose time is before `before` (to the second, as SeenTransfers). */
  prune(before: number): void {
    const first = storedSecond(before);
    for (const [second, ids] of this.seconds) {
      if (second >= first) continue;
      this.count -= ids.count;
      this.seconds.delete(second);
    }
    this.lastSecond = -1;
    this.last = undefined;
  }

  get size(): number {
    return this.count;
  }

  /** The ids and their times, as SeenTransfers saves them (a snapshot either can read). */
  toJSON(): SeenSnapshot {
    return writeSeenSnapshot(this.count, (put) => {
      for (const [second, { table }] of this.seconds) {
        for (let at = 0; at < table.length; at += 2) {
          const hi = table[at] as number;
          const lo = table[at + 1] as number;
          if (hi !== 0 || lo !== 0) put(hi, lo, second);
        }
      }
    });
  }

  /** A snapshot as `toJSON` (or SeenTransfers) saves it, or the [id, time] pairs older versions saved; anything unreadable is an empty set. */
  static from(snapshot: unknown): TimedIds {
    const ids = new TimedIds();
    readSeenSnapshot(snapshot).forEach(
      (id, time) => ids.add(id, time),
      (hi, lo, second) => ids.insert(hi, lo, second),
    );
    return ids;
  }

  private insert(hi: number, keyLo: number, second: number): boolean {
    const lo = hi === 0 && keyLo === 0 ? 1 : keyLo;
    let ids = second === this.lastSecond ? this.last : this.seconds.get(second);
    // A new second is sized for as many ids as the last one looked up had: a steady stream's seconds are alike,
    // and growing each from a few slots was a third of what the table cost in the bench.
    if (ids === undefined) this.seconds.set(second, (ids = new SecondIds(this.last?.count ?? 0)));
    this.lastSecond = second;
    this.last = ids;
    if (!ids.insert(hi, lo)) return false;
    this.count++;
    return true;
  }
}

/** One second's keys: open addressing, linear probing, at most half full. */
class SecondIds {
  table: Uint32Array;
  count = 0;

  constructor(expected: number) {
    this.table = new Uint32Array(2 * slotsFor(expected, MIN_SLOTS, MAX_LOAD));
  }

  insert(hi: number, lo: number): boolean {
    const { table } = this;
    const mask = (table.length >> 1) - 1;
    let i = home(hi, lo, mask);
    for (; table[2 * i] !== 0 || table[2 * i + 1] !== 0; i = (i + 1) & mask) {
      if (table[2 * i + 1] === lo && table[2 * i] === hi) return false;
    }
    table[2 * i] = hi;
    table[2 * i + 1] = lo;
    this.count++;
    if (this.count > MAX_LOAD * (table.length >> 1)) this.grow();
    return true;
  }

  private grow(): void {
    const old = this.table;
    const table = new Uint32Array(old.length * 2);
    const mask = (table.length >> 1) - 1;
    for (let at = 0; at < old.length; at += 2) {
      const hi = old[at] as number;
      const lo = old[at + 1] as number;
      if (hi === 0 && lo === 0) continue;
      let i = home(hi, lo, mask);
      while (table[2 * i] !== 0 || table[2 * i + 1] !== 0) i = (i + 1) & mask;
      table[2 * i] = hi;
      table[2 * i + 1] = lo;
    }
    this.table = table;
  }
}

/** Slots a second's table starts with (a second of a quiet stream holds one or two ids). */
const MIN_SLOTS = 4;
/** The most of its slots a second's table fills before it doubles. */
const MAX_LOAD = 0.75;

/** The home slot of a key in a table of mask + 1 slots. */
function home(hi: number, lo: number, mask: number): number {
  return slotOf(hi, lo, mask + 1);
}
