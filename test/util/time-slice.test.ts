import { describe, expect, it } from 'vitest';
import { TimeSlice } from '../../src/util/time-slice.js';

describe('TimeSlice', () => {
  it('is spent once the budget has passed, read every checkEvery calls only', () => {
    let now = 1_000;
    let reads = 0;
    const slice = new TimeSlice(8, () => (reads++, now), 4);
    reads = 0;
    now += 20; // over budget, but the clock is not read before the 4th call
    expect([slice.spent(), slice.spent(), slice.spent()]).toEqual([false, false, false]);
    expect(reads).toBe(0);
    expect(slice.spent()).toBe(true);
    expect(reads).toBe(1);
  });

  it('is not spent within the budget', () => {
    let now = 0;
    const slice = new TimeSlice(8, () => now, 1);
    now = 7;
    expect(slice.spent()).toBe(false);
    now = 8;
    expect(slice.spent()).toBe(true);
  });

  it('yields a turn of the event loop (timers and I/O run) and starts a new slice', async () => {
    let now = 0;
    const slice = new TimeSlice(8, () => now, 1);
    now = 10;
    expect(slice.spent()).toBe(true);
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    await slice.yield();
    expect(immediateRan).toBe(true);
    expect(slice.spent()).toBe(false);
    now = 17;
    expect(slice.spent()).toBe(false);
    now = 18;
    expect(slice.spent()).toBe(true);
  });
});
