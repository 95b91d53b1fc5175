import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { denseHistory, RATE_PER_MINUTE } from './dense-history.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface BackfillResult {
  records: number;
  seconds: number;
  requests: number;
  baselineRssMb: number;
  peakRssMb: number;
  quarterRssMb: number[];
  rememberedByRules: number;
}

/**
 * The backfill runs in a child process so its RSS is the pipeline's, not the simulator's; as plain JavaScript
 * bundled by esbuild (node_modules left external, as in dist/), because a TypeScript loader in the child would
 * add its own worker thread (~35 MB) to the RSS measured.
 */
export async function measureBackfill(records: number, nodeFlags: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<BackfillResult> {
  const { sim, history } = await denseHistory(records / RATE_PER_MINUTE);
  // Inside the repository, so the bundle's bare imports resolve from its node_modules (ESM ignores NODE_PATH).
  mkdirSync(path.join(root, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(path.join(root, 'node_modules/.cache/tw-bench-'));
  try {
    const bundle = path.join(dir, 'backfill-child.mjs');
    await build({ entryPoints: [path.join(root, 'bench/backfill-child.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: bundle, logLevel: 'error' });
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
    rmSync(dir, { recursive: true, force: true });
  }
}

