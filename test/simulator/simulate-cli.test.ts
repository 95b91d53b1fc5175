import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { getAll, getToken } from './sim-client.js';

/** The real binary, as users run it (`npm test` builds it first). */
const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function run(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  expect(existsSync(MAIN), `${MAIN} is missing: run npm run build`).toBe(true);
  const child = spawn(process.execPath, [MAIN, 'simulate', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitForUrl(output: () => string, exited: Promise<number | null>): Promise<string> {
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    const match = /listening on (http:\/\/\S+)/.exec(output());
    if (match?.[1]) return match[1];
    if (done) throw new Error(`simulate exited before listening:\n${output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('transfer-watch simulate', () => {
  it('starts on a free port, prints its URL and username (not the password), answers, and exits 0 on SIGTERM', async () => {
    const { child, output, exited } = run(['--port', '0', '--seed', '3', '--username', 'ops', '--password', 'pw-not-shown', '--control', '--scenario', 'burst']);
    const url = await waitForUrl(output, exited);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(output()).toContain('ops');
    expect(output()).not.toContain('pw-not-shown');

    const token = await getToken(url, 'ops', 'pw-not-shown');
    const now = Date.now();
    const { records } = await getAll(url, { start: now - 3_600_000, end: now, limit: 1000 }, token);
    expect(records.length).toBeGreaterThan(100);
    const stats: unknown = await (await fetch(`${url}/_sim/stats`)).json();
    expect(stats).toMatchObject({ tokenRequests: 1, recordsServed: records.length });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('--history-days sets how far back the history goes: nothing before it, records right after it', async () => {
    const { child, output, exited } = run(['--port', '0', '--history-days', '70', '--rate', '5']);
    const url = await waitForUrl(output, exited);
    expect(output()).toContain('70 days of history');
    const token = await getToken(url, 'demo', 'demo');
    const start = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 70 * 86_400_000;
    const before = await getAll(url, { start: start - 86_400_000, end: start - 1, limit: 1000 }, token);
    expect(before.records).toEqual([]);
    const after = await getAll(url, { start, end: start + 3_600_000, limit: 1000 }, token);
    expect(after.records.length).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('exits 2 on a usage error', async () => {
    const { output, exited } = run(['--scenario', 'no-such-scenario']);
    expect(await exited).toBe(2);
    expect(output()).toMatch(/steady, burst, late-file, faults/);
  });
});
