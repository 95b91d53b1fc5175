import { describe, expect, it } from 'vitest';
import { EventLoopShare, TimeSlice } from '../../src/util/time-slice.js';

/** A share whose turns are run by the test: `turns` holds what the share asked to run at the next turn. */
function manualShare(now: () => number) {
  const turns: Array<() => void> = [];
  const share = new EventLoopShare(8, now, (fn) => turns.push(fn));
  const runTurn = async () => {
    const next = turns.splice(0);
    for (const fn of next) fn();
    await new Promise((r) => setImmediate(r)); // the resumed jobs' continuations
  };
  return { share, turns, runTurn };
}

describe('TimeSlice', () => {
  it('is spent once the budget has passed, the clock read every checkEvery calls only', () => {
    let now = 1_000;
    let reads = 0;
    const share = new EventLoopShare(8, () => (reads++, now));
    const slice = new TimeSlice(share, 4);
    reads = 0;
    now += 20; // over budget, but the clock is not read before the 4th call
    expect([slice.spent(), slice.spent(), slice.spent()]).toEqual([false, false, false]);
    expect(reads).toBe(0);
    expect(slice.spent()).toBe(true);
    expect(reads).toBe(1);
  });

  it('is not spent within the budget', () => {
    let now = 0;
    const slice = new TimeSlice(new EventLoopShare(8, () => now), 1);
    now = 7;
    expect(slice.spent()).toBe(false);
    now = 8;
    expect(slice.spent()).toBe(true);
  });

  it('yields a turn of the event loop (timers and I/O run) and starts a new slice', async () => {
    let now = 0;
    const slice = new TimeSlice(new EventLoopShare(8, () => now), 1);
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

describe('EventLoopShare', () => {
  it('resumes one waiting job per turn, oldest first, each with a fresh slice', async () => {
    let now = 0;
    const { share, turns, runTurn } = manualShare(() => now);
    const resumed: string[] = [];
    for (const job of ['a', 'b', 'c']) void share.turn().then(() => resumed.push(job));
    expect(share.waitingJobs).toBe(3);
    expect(turns).toHaveLength(1); // one turn asked for, however many wait

    now = 100;
    await runTurn();
    expect(resumed).toEqual(['a']);
    expect(share.spent()).toBe(false); // a's slice starts now
    expect(turns).toHaveLength(1); // b and c: the next turn, asked from inside this one
    now = 108;
    expect(share.spent()).toBe(true);

    await runTurn();
    expect(resumed).toEqual(['a', 'b']);
    await runTurn();
    expect(resumed).toEqual(['a', 'b', 'c']);
    expect(turns).toHaveLength(0);
  });

  it('a job that starts on I/O shares the slice of the turn it runs in', () => {
    let now = 0;
    const share = new EventLoopShare(8, () => now);
    now = 6; // another job used 6 ms of this turn
    const late = new TimeSlice(share, 1);
    expect(late.spent()).toBe(false);
    now = 8;
    expect(late.spent()).toBe(true);
  });

  it('on the real event loop, two long jobs never run a slice in the same turn', async () => {
    // A probe counts turns of the event loop (one check phase each); each job notes the turn of each slice.
    let turn = 0;
    let probing = true;
    const probe = () => {
      turn++;
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    const share = new EventLoopShare(0); // every slice spent at once: each job yields after each step
    const seen: number[] = [];
    const job = async () => {
      const slice = new TimeSlice(share, 1);
      for (let i = 0; i < 5; i++) {
        if (slice.spent()) await slice.yield();
        seen.push(turn);
      }
    };
    await Promise.all([job(), job(), job()]);
    probing = false;
    expect(seen).toHaveLength(15);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
