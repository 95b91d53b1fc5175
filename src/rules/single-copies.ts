import { hash64 } from '../util/hash64.js';
import { slotOf, slotsFor } from '../util/hash-slots.js';

/** What a file sent once keeps of its transfer: enough to show it as a sample if a second copy comes. */
export interface SingleCopy {
  time: number;
  user: string;
  instance: string;
  message: string;
}

/**
 * duplicate_file's files seen once in its window, which is nearly every file: a table of 64-bit keys (a hash of
 * the group, file name and size) in typed arrays, 26 bytes a slot, at most 70% full, instead of a group object
 * with its labels, copies list and sample (~350 bytes a file). User, instance and message are kept as indexes
 * into a table of the distinct values (successful transfers carry few), so the first copy's sample can be rebuilt
 * exactly when a second copy makes the file a duplicate.
 */
export class SingleCopies {
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** Time of the copy per slot; NaN marks an empty slot. */
  private times: Float64Array;
  private users: Uint16Array;
  private instances: Uint16Array;
  private messages: Uint16Array;
  private count = 0;
  private readonly values = new ValueTable();

  constructor(capacity = MIN_SLOTS) {
    [this.hi, this.lo, this.times, this.users, this.instances, this.messages] = emptyColumns(slotsFor(capacity, MIN_SLOTS));
  }

  get size(): number {
    return this.count;
  }

  /** Remember the one copy of the file `key`. */
  put(key: string, copy: SingleCopy): void {
    const [hi, lo] = hash64(key);
    let i = this.find(hi, lo);
    if (i < 0) {
      i = this.emptySlotFor(hi, lo);
      this.count++;
    }
    this.hi[i] = hi;
    this.lo[i] = lo;
    this.times[i] = copy.time;
    this.users[i] = this.values.indexOf(copy.user);
    this.instances[i] = this.values.indexOf(copy.instance);
    this.messages[i] = this.values.indexOf(copy.message);
    if (this.count > this.times.length * MAX_LOAD) this.resize(this.count);
  }

  /** The copy of the file `key`, forgotten here (it moves to the rule's repeated files); undefined if none. */
  take(key: string): SingleCopy | undefined {
    const [hi, lo] = hash64(key);
    const i = this.find(hi, lo);
    if (i < 0) return undefined;
    const copy = { time: this.times[i] as number, user: this.values.at(this.users[i] as number), instance: this.values.at(this.instances[i] as number), message: this.values.at(this.messages[i] as number) };
    this.removeAt(i);
    return copy;
  }

  /** Forget the copies at or before `time` (they left the window). In place: backward-shift deletion. */
  pruneUpTo(time: number): void {
    const { times } = this;
    const mask = times.length - 1;
    // Start after an empty slot (the load stays below MAX_LOAD), so no cluster wraps past the starting point.
    let start = 0;
    while (!Number.isNaN(times[start])) start++;
    for (let step = 1; step <= mask; ) {
      const i = (start + step) & mask;
      const t = times[i] as number;
      if (!Number.isNaN(t) && t <= time) this.removeAt(i);
      else step++;
    }
    if (this.times.length > MIN_SLOTS && slotsFor(this.count, MIN_SLOTS) * SHRINK_FACTOR <= this.times.length) this.resize(this.count);
  }

  private find(hi: number, lo: number): number {
    const mask = this.times.length - 1;
    for (let i = slotOf(hi, lo, this.times.length); ; i = (i + 1) & mask) {
      if (Number.isNaN(this.times[i])) return -1;
      if (this.lo[i] === lo && this.hi[i] === hi) return i;
    }
  }

  private emptySlotFor(hi: number, lo: number): number {
    const mask = this.times.length - 1;
    let i = slotOf(hi, lo, this.times.length);
    while (!Number.isNaN(this.times[i])) i = (i + 1) & mask;
    return i;
  }

  private removeAt(hole: number): void {
    const { hi, lo, times, users, instances, messages } = this;
    const mask = times.length - 1;
    for (let j = (hole + 1) & mask; !Number.isNaN(times[j]); j = (j + 1) & mask) {
      const home = slotOf(hi[j] as number, lo[j] as number, times.length);
      // The entry at j stays if its home lies cyclically in (hole, j]: probing from home reaches j first.
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      hi[hole] = hi[j] as number;
      lo[hole] = lo[j] as number;
      times[hole] = times[j] as number;
      users[hole] = users[j] as number;
      instances[hole] = instances[j] as number;
      messages[hole] = messages[j] as number;
      hole = j;
    }
    times[hole] = Number.NaN;
    this.count--;
  }

  private resize(expected: number): void {
    const { hi, lo, times, users, instances, messages } = this;
    [this.hi, this.lo, this.times, this.users, this.instances, this.messages] = emptyColumns(slotsFor(expected, MIN_SLOTS));
    for (let i = 0; i < times.length; i++) {
      if (Number.isNaN(times[i])) continue;
      const j = this.emptySlotFor(hi[i] as number, lo[i] as number);
      this.hi[j] = hi[i] as number;
      this.lo[j] = lo[i] as number;
      this.times[j] = times[i] as number;
      this.users[j] = users[i] as number;
      this.instances[j] = instances[i] as number;
      this.messages[j] = messages[i] as number;
    }
  }
}

/**
 * The distinct instance names and messages, by index. Past 65,535 values (a service whose success messages
 * vary per transfer) further ones are not kept: their copies show an empty message.
 */
class ValueTable {
  private readonly index = new Map<string, number>([['', 0]]);
  private readonly list: string[] = [''];

  indexOf(value: string): number {
    const known = this.index.get(value);
    if (known !== undefined) return known;
    if (this.list.length > 0xffff) return 0;
    this.index.set(value, this.list.length);
    this.list.push(value);
    return this.list.length - 1;
  }

  at(i: number): string {
    return this.list[i] ?? '';
  }
}

const MIN_SLOTS = 256;

/** The table's columns for `slots` empty slots: key halves, time (NaN: empty), user, instance and message indexes. */
function emptyColumns(slots: number): [Uint32Array, Uint32Array, Float64Array, Uint16Array, Uint16Array, Uint16Array] {
  return [new Uint32Array(slots), new Uint32Array(slots), new Float64Array(slots).fill(Number.NaN), new Uint16Array(slots), new Uint16Array(slots), new Uint16Array(slots)];
}
const MAX_LOAD = 0.7;
const SHRINK_FACTOR = 4;


