import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hash64 } from '../../src/util/hash64.js';
import { SeenTransfers } from '../../src/util/seen-transfers.js';

/** Ids as the record normaliser makes them: 32 hex digits of a SHA-256. */
const idOf = (n: number): string => createHash('sha256').update(`transfer ${n}`).digest('hex').slice(0, 32);

describe('SeenTransfers', () => {
  it('recognises a repeat, for hex ids and for any other string', () => {
    const seen = new SeenTransfers();
    expect(seen.add(idOf(1), 10)).toBe(true);
    expect(seen.add(idOf(1), 10)).toBe(false);
    expect(seen.add('a', 10)).toBe(true);
    expect(seen.add('a', 11)).toBe(false);
    expect(seen.add('b', 10)).toBe(true);
    expect(seen.has('a')).toBe(true);
    expect(seen.has('c')).toBe(false);
    expect(seen.size).toBe(3);
  });

  it('holds a catch-up window of 200,000 ids exactly: each new once, each repeat refused', () => {
    const seen = new SeenTransfers();
    const ids = Array.from({ length: 200_000 }, (_, i) => idOf(i));
    expect(ids.every((id, i) => seen.add(id, i))).toBe(true);
    expect(seen.size).toBe(200_000);
    expect(ids.some((id, i) => seen.add(id, i))).toBe(false);
    expect(seen.has(idOf(200_001))).toBe(false);
  });

  it('grows without a pause: the old table is moved a few slots per call, and every id is found meanwhile', () => {
    const seen = new SeenTransfers();
    const before = seen.capacity;
    const ids: string[] = [];
    while (seen.capacity === before) {
      ids.push(idOf(ids.length));
      expect(seen.add(ids.at(-1) as string, 0)).toBe(true);
    }
    // Both tables are held while the old one is moved, and a call moves only a few of its slots.
    expect(seen.capacity).toBe(before + 2 * before);
    expect(seen.has(ids[0] as string)).toBe(true);
    expect(seen.capacity).toBe(before + 2 * before);
    // Found wherever it is, in the old table or the new (each call moves a few more slots), and not added twice.
    for (const id of ids) expect(seen.has(id)).toBe(true);
    for (const id of ids) expect(seen.add(id, 0)).toBe(false);
    expect(seen.capacity).toBe(2 * before);
    expect(seen.size).toBe(ids.length);
    expect(seen.has(idOf(ids.length))).toBe(false);
  });

  it('forgets only what happened before the prune time, and still knows the rest', () => {
    const seen = new SeenTransfers();
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 5000; i++) seen.add(idOf(i), t0 + i * 1000);
    seen.prune(t0 + 4000 * 1000);
    expect(seen.size).toBe(1000);
    expect(seen.has(idOf(3999))).toBe(false);
    expect(seen.has(idOf(4000))).toBe(true);
    expect(seen.add(idOf(4999), t0 + 4999 * 1000)).toBe(false);
    expect(seen.add(idOf(10), t0 + 10 * 1000)).toBe(true);
  });

  it('keeps, within the second of the prune time, what it cannot tell apart (never forgets too much)', () => {
    const seen = new SeenTransfers();
    const t0 = 1_700_000_000_000;
    seen.add(idOf(1), t0 + 100);
    seen.add(idOf(2), t0 + 900);
    seen.add(idOf(3), t0 - 1);
    seen.prune(t0 + 500);
    expect(seen.has(idOf(1))).toBe(true);
    expect(seen.has(idOf(2))).toBe(true);
    expect(seen.has(idOf(3))).toBe(false);
  });

  // Snapshots in state files hold the keys: they must stay what earlier versions computed (the first 64 bits of
  // a hex id, read as two 32-bit halves; a 64-bit hash of any other id).
  it('keys an id as earlier versions did, upper- and lower-case hex and other ids alike', () => {
    // Not hex: a character just outside each range of digits ('/', ':', '@', 'G', '`', 'g'), in either half, and one
    // past the ASCII table.
    const notHex = ['/', ':', '@', 'G', '`', 'g', 'ÿ'].flatMap((c, i) => [0, 7, 8, 15].map((at) => `${idOf(10 + i).slice(0, at)}${c}${idOf(10 + i).slice(at + 1)}`));
    const ids = [idOf(1), idOf(2).toUpperCase(), `${idOf(3).slice(0, 15)}g${idOf(3).slice(16)}`, 'g123456789abcdef0', '0123456789abcdeF', '0123456789abcde', 'é'.repeat(20), '', ...notHex];
    const expected = Buffer.alloc(8 * ids.length);
    const seen = new SeenTransfers();
    ids.forEach((id, n) => {
      const [hi, lo] = /^[0-9a-f]{16}/i.test(id) ? [Number.parseInt(id.slice(0, 8), 16), Number.parseInt(id.slice(8, 16), 16)] : hash64(id);
      expected.writeUInt32BE(hi, n * 8);
      expected.writeUInt32BE(lo, n * 8 + 4);
      expect(seen.add(id, 1_000 + n)).toBe(true);
    });
    // The snapshot lists keys in table order: compare as sets of 8-byte keys.
    const keysOf = (b: Buffer): string[] => Array.from({ length: b.length / 8 }, (_, i) => b.subarray(i * 8, i * 8 + 8).toString('hex')).sort();
    expect(keysOf(Buffer.from(seen.toJSON().keys, 'base64'))).toEqual(keysOf(expected));
  });

  it('survives a snapshot round trip, and reads the [id, time] pairs of earlier versions', () => {
    const seen = new SeenTransfers();
    seen.add(idOf(1), 1);
    seen.add('hand-written id', 2);
    const snapshot = JSON.parse(JSON.stringify(seen.toJSON())) as unknown;
    // Two strings, whatever the number of ids: a save builds no object per id.
    expect(Object.values(snapshot as object).every((v) => typeof v === 'string')).toBe(true);
    const restored = SeenTransfers.from(snapshot);
    expect(restored.size).toBe(2);
    expect(restored.add(idOf(1), 1)).toBe(false);
    expect(restored.add('hand-written id', 2)).toBe(false);
    expect(restored.add(idOf(2), 3)).toBe(true);
    // A state file of an earlier version: [id, time] pairs, whole ids or their first 16 hex digits.
    const old = SeenTransfers.from([[idOf(7), 7], [idOf(9).slice(0, 16), 1_700_000_123_456], ['bad'], 'junk']);
    expect(old.size).toBe(2);
    expect(old.add(idOf(7), 7)).toBe(false);
    expect(old.add(idOf(9), 1_700_000_123_456)).toBe(false);
    // Times are kept to the second (rounded down): all they are for is pruning.
    const pruned = SeenTransfers.from(old.toJSON());
    pruned.prune(1_700_000_123_000);
    expect(pruned.has(idOf(9))).toBe(true);
    pruned.prune(1_700_000_124_000);
    expect(pruned.has(idOf(9))).toBe(false);
    // Unreadable snapshots are an empty set, never a crash.
    expect(SeenTransfers.from({ keys: 1, times: 'x' }).size).toBe(0);
    expect(SeenTransfers.from(null).size).toBe(0);
  });
});
