import { describe, expect, it } from 'vitest';
import { joinInSlices, jsonWithList, mapInSlices } from '../../src/util/in-slices.js';

describe('work in slices', () => {
  const items = Array.from({ length: 1_234 }, (_, i) => ({ i, text: `line ${i} "quoted" \u0000 é` }));

  it('writes the same JSON text as JSON.stringify, keys in the same order, for a list of any length', async () => {
    for (const list of [items, items.slice(0, 1), [], items.slice(0, 500)]) {
      const toJson = (x: { i: number; text: string }) => ({ n: x.i, text: x.text, none: undefined });
      const want = JSON.stringify({ from: 'a', to: 'b', occurrences: list.map(toJson), next: null });
      expect(await jsonWithList({ from: 'a', to: 'b' }, 'occurrences', list, toJson, { next: null })).toBe(want);
    }
  });

  it('maps and joins in order, giving the event loop a turn between slices', async () => {
    // Another job's turns: a synchronous map would let none run before it returns.
    let turns = 0;
    let stop = false;
    const tick = (): void => {
      turns++;
      if (!stop) setImmediate(tick);
    };
    setImmediate(tick);
    let sawTurn = false;
    const mapped = await mapInSlices(items, (x) => {
      if (x.i === 1_000) sawTurn = turns > 0;
      return x.i * 2;
    }, 100);
    stop = true;
    expect(mapped).toEqual(items.map((x) => x.i * 2));
    expect(sawTurn, 'another job ran between slices').toBe(true);
    expect(await joinInSlices(items, (x) => String(x.i), ',', 7)).toBe(items.map((x) => x.i).join(','));
  });
});
