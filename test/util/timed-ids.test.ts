import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SeenTransfers } from '../../src/util/seen-transfers.js';
import { TimedIds } from '../../src/util/timed-ids.js';

const idOf = (n: number): string => createHash('sha256').update(`transfer ${n}`).digest('hex').slice(0, 16);
const T0 = Date.parse('2026-11-20T10:00:00Z');

describe('TimedIds', () => {
  it('recognises a repeat that comes with its time, for hex ids and any other string', () => {
    const ids = new TimedIds();
    expect(ids.add(idOf(1), T0)).toBe(true);
    expect(ids.add(idOf(1), T0)).toBe(false);
    expect(ids.add(idOf(2), T0)).toBe(true);
    expect(ids.add('not hex', T0 + 1500)).toBe(true);
    expect(ids.add('not hex', T0 + 1500)).toBe(false);
    // The key 0 is kept apart from the empty slot.
    expect(ids.add('0000000000000000', T0)).toBe(true);
    expect(ids.add('0000000000000000', T0)).toBe(false);
    expect(ids.size).toBe(4);
  });

  it('answers as a set of (id, second) would, through growth and pruning, over a dense and a sparse stream', () => {
    let seed = 7;
    const random = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const ids = new TimedIds();
    const expected = new Map<string, number>(); // id -> stored second
    let time = T0;
    for (let step = 0; step < 60_000; step++) {
      // Bursts of a few hundred a second, then quiet seconds; a fifth are repeats of recent ids.
      time += random() < 0.995 ? Math.floor(random() * 8) : Math.floor(random() * 30_000);
      const recent = [...expected.keys()].slice(-50);
      const id = random() < 0.2 && recent.length > 0 ? (recent[Math.floor(random() * recent.length)] as string) : idOf(step);
      const at = expected.has(id) ? ((expected.get(id) as number) - 1) * 1000 : time;
      expect(ids.add(id, at)).toBe(!expected.has(id));
      expected.set(id, Math.floor(at / 1000) + 1);
      if (step % 5_000 === 4_999) {
        const before = time - 60_000;
        ids.prune(before);
        for (const [k, second] of expected) if (second < Math.floor(before / 1000) + 1) expected.delete(k);
        expect(ids.size).toBe(expected.size);
      }
    }
    // What was pruned is new again; what was kept is not.
    for (const [id, second] of [...expected].slice(0, 200)) expect(ids.add(id, (second - 1) * 1000)).toBe(false);
  });

  it('saves what SeenTransfers saves, and each reads the other’s snapshot (and the pairs of older versions)', () => {
    const ids = new TimedIds();
    const seen = new SeenTransfers();
    for (let i = 0; i < 2_000; i++) {
      ids.add(idOf(i), T0 + i * 300);
      seen.add(idOf(i), T0 + i * 300);
    }
    const fromIds = ids.toJSON();
    const sorted = (s: { keys: string; times: string }): string[] => {
      const keys = Buffer.from(s.keys, 'base64');
      const times = Buffer.from(s.times, 'base64');
      return Array.from({ length: keys.length / 8 }, (_, i) => `${keys.toString('hex', i * 8, i * 8 + 8)}@${times.readUInt32BE(i * 4)}`).sort();
    };
    expect(sorted(fromIds)).toEqual(sorted(seen.toJSON()));
    const restored = TimedIds.from(seen.toJSON());
    expect(restored.size).toBe(2_000);
    expect(restored.add(idOf(10), T0 + 10 * 300)).toBe(false);
    expect(restored.add(idOf(2_000), T0 + 2_000 * 300)).toBe(true);
    expect(SeenTransfers.from(fromIds).has(idOf(1_999))).toBe(true);
    const pairs = TimedIds.from([[idOf(1), T0], ['x', T0], 'junk', [3, 4]]);
    expect(pairs.size).toBe(2);
    expect(pairs.add('x', T0)).toBe(false);
    expect(TimedIds.from({ keys: 1 }).size).toBe(0);
    expect(TimedIds.from(undefined).size).toBe(0);
  });
});
