/** The dense, seeded history every throughput and memory line of the bench reads from the simulator. */
import { startSimulator, type RunningSimulator } from '../src/simulator/start-simulator.js';
import { ManualClock } from '../src/util/clock.js';
import type { BenchHistory } from './bench-pipeline.js';

/** Dense history: 10,000 transfers a minute, so 1,000,000 records is 100 minutes of it. */
export const RATE_PER_MINUTE = 10_000;
/** A Monday morning, so daily statements and position files are in the history too. */
export const HISTORY_START = Date.UTC(2026, 0, 5, 9, 0, 0);

/** The simulator serving [HISTORY_START, + minutes) of dense history; its clock is fixed after the end. */
export async function denseHistory(minutes: number): Promise<{ sim: RunningSimulator; history: BenchHistory }> {
  const end = HISTORY_START + Math.round(minutes * 60_000) - 1;
  // Every minute of the slice stays generated: the two queries read it in different orders, and evicted minutes
  // regenerated on demand made the fetch line measure the simulator. At most 100 minutes of ~10,000 records here.
  const sim = await startSimulator({ seed: 7, scenario: 'steady', clock: new ManualClock(end + 60_000), ratePerMinute: RATE_PER_MINUTE, historyStart: HISTORY_START, cachedMinutes: Math.ceil(minutes) + 2 });
  return { sim, history: { url: sim.url, start: HISTORY_START, end } };
}

