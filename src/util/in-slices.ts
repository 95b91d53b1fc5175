import { setImmediate } from 'node:timers';

/** Items handled between two turns of the event loop. */
const SLICE = 500;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * `items.map(fn)` a slice at a time, with a turn of the event loop between slices for the health checks, polls and
 * scrapes waiting: a page of 5,000 occurrences read, formatted and serialised in one go held the loop 200 ms.
 */
export async function mapInSlices<T, U>(items: readonly T[], fn: (item: T) => U, size = SLICE): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i += size) {
    if (i > 0) await nextTurn();
    const end = Math.min(items.length, i + size);
    for (let k = i; k < end; k++) out.push(fn(items[k] as T));
  }
  return out;
}

/** The texts of `items` each turned by `fn`, joined, a slice at a time (as mapInSlices). */
export async function joinInSlices<T>(items: readonly T[], fn: (item: T) => string, separator = '', size = SLICE): Promise<string> {
  const chunks: string[] = [];
  for (let i = 0; i < items.length; i += size) {
    if (i > 0) await nextTurn();
    chunks.push(items.slice(i, i + size).map(fn).join(separator));
  }
  return chunks.join(separator);
}

/**
 * `JSON.stringify({ ...before, [listKey]: items.map(toJson), ...after })`, the list serialised a slice at a time: the
 * same text, the keys in the same order.
 */
export async function jsonWithList<T>(
  before: Record<string, unknown>,
  listKey: string,
  items: readonly T[],
  toJson: (item: T) => unknown,
  after: Record<string, unknown> = {},
): Promise<string> {
  const mark = '\u0000list\u0000';
  const outer = JSON.stringify({ ...before, [listKey]: mark, ...after });
  const list = await joinInSlices(items, (item) => JSON.stringify(toJson(item)) ?? 'null', ',');
  return outer.replace(JSON.stringify(mark), () => `[${list}]`);
}
