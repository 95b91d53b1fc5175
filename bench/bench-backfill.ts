import { lastLineOfBundledChild } from './child-bundle.js';
import { denseHistory, RATE_PER_MINUTE } from './dense-history.js';

export interface BackfillResult {
  records: number;
  seconds: number;
  requests: number;
  baselineRssMb: number;
  peakRssMb: number;
  quarterRssMb: number[];
  rememberedByRules: number;
}

/** The backfill runs in a child process (bundled: see bundleChild) so its RSS is the pipeline's, not the simulator's. */
export async function measureBackfill(records: number, nodeFlags: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<BackfillResult> {
  const { sim, history } = await denseHistory(records / RATE_PER_MINUTE);
  try {
    const input = JSON.stringify({ ...history, rules: 100, expectedRecords: records });
    return JSON.parse(await lastLineOfBundledChild('bench/backfill-child.ts', input, nodeFlags, env)) as BackfillResult;
  } finally {
    await sim.close();
  }
}
