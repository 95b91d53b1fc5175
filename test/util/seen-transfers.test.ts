import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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

  it('survives a snapshot round trip, and reads snapshots that held whole ids', () => {
    const seen = new SeenTransfers();
    seen.add(idOf(1), 1);
    seen.add('hand-written id', 2);
    const restored = SeenTransfers.from(JSON.parse(JSON.stringify(seen.toJSON())) as Array<[string, number]>);
    expect(restored.size).toBe(2);
    expect(restored.add(idOf(1), 1)).toBe(false);
    expect(restored.add('hand-written id', 2)).toBe(false);
    expect(restored.add(idOf(2), 3)).toBe(true);
    // A state file written before ids were kept compactly.
    const old = SeenTransfers.from([[idOf(7), 7]]);
    expect(old.add(idOf(7), 7)).toBe(false);
    // Times are kept to the second (rounded down): all they are for is pruning.
    expect(old.toJSON()).toEqual([[idOf(7).slice(0, 16), 0]]);
    expect(SeenTransfers.from([[idOf(8), 1_700_000_123_456]]).toJSON()).toEqual([[idOf(8).slice(0, 16), 1_700_000_123_000]]);
  });
});
