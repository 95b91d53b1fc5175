import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * A bench child as plain JavaScript bundled by esbuild (node_modules left external, as in dist/): a TypeScript
 * loader in the child would add its own worker thread (~35 MB) and its CPU to what is measured. The bundle lives
 * inside the repository so its bare imports resolve from node_modules (ESM ignores NODE_PATH).
 */
export async function bundleChild(entry: string): Promise<{ file: string; root: string; remove: () => void }> {
  mkdirSync(path.join(root, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(path.join(root, 'node_modules/.cache/tw-bench-'));
  const file = path.join(dir, `${path.basename(entry, '.ts')}.mjs`);
  await build({ entryPoints: [path.join(root, entry)], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: file, logLevel: 'error' });
  return { file, root, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The first line a bench child prints (what it is ready with); rejects if it exits first. */
export function firstLineOf(child: ChildProcess): Promise<string> {
  const stdout = child.stdout;
  if (!stdout) return Promise.reject(new Error('bench child has no stdout'));
  return new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench child exited with ${code}`)));
    createInterface({ input: stdout }).once('line', resolve);
  });
}

/**
 * Runs a bench child to its end (bundled as `bundleChild` does, started with `nodeFlags` and `env` on top of this
 * process's) with `input` as its argument, and gives the last line it printed: its result. Its stderr goes with
 * the error when it exits with anything but 0.
 */
export async function lastLineOfBundledChild(entry: string, input: string, nodeFlags: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<string> {
  const bundled = await bundleChild(entry);
  try {
    const child = spawn(process.execPath, [...nodeFlags, bundled.file, input], { cwd: bundled.root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`bench child ${entry} exited with ${code}: ${stderr}`);
    return stdout.trim().split('\n').at(-1) ?? '';
  } finally {
    bundled.remove();
  }
}
