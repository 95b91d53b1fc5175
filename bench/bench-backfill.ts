import { spawn } from 'node:child_process';
import { bundleChild } from './child-bundle.js';
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
  const bundled = await bundleChild('bench/backfill-child.ts');
  try {
    const { file: bundle, root } = bundled;
    const input = JSON.stringify({ ...history, rules: 100, expectedRecords: records });
    const child = spawn(process.execPath, [...nodeFlags, bundle, input], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`backfill child exited with ${code}: ${stderr}`);
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as BackfillResult;
  } finally {
    await sim.close();
    bundled.remove();
  }
}

