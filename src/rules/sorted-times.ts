/**
 * Small helpers for per-group lists kept sorted by occurrence time. Records mostly arrive in time order, so
 * inserting walks back from the end (O(1) for in-order data, O(late records) otherwise).
 */
export function insertByTime<T extends { time: number }>(list: T[], item: T): void {
  let i = list.length;
  while (i > 0 && (list[i - 1] as T).time > item.time) i--;
  // At the end, as most are: a push (a splice that inserts nothing in between cost several times as much).
  if (i === list.length) list.push(item);
  else list.splice(i, 0, item);
}

/** Drop the entries at or before `time` from the front of a sorted list. */
export function dropUpTo<T extends { time: number }>(list: T[], time: number): void {
  let drop = 0;
  while (drop < list.length && (list[drop] as T).time <= time) drop++;
  if (drop > 0) list.splice(0, drop);
}

/** Index of the first entry whose time is after `time` (binary search). */
export function firstAfter<T extends { time: number }>(list: readonly T[], time: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as T).time <= time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Entries of a sorted list with time in (from, to]. */
export function entriesIn<T extends { time: number }>(list: readonly T[], from: number, to: number): T[] {
  return list.slice(firstAfter(list, from), firstAfter(list, to));
}

/** How many entries of a sorted list have time in (from, to]. */
export function countIn<T extends { time: number }>(list: readonly T[], from: number, to: number): number {
  return Math.max(0, firstAfter(list, to) - firstAfter(list, from));
}
