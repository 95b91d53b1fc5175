import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The built CLI, as users run it. `npm test` builds before vitest runs. */
export const CLI = path.join(root, 'dist/cli/main.js');

export interface DaemonProcess {
  proc: ChildProcess;
  url: string;
  /** Every JSON log line parsed so far (non-JSON stdout lines are in `stdoutLines`). */
  logs: Array<Record<string, unknown>>;
  stdoutLines: string[];
  stderr: () => string;
  /** Resolve with the exit code once the process ends. */
  exited: Promise<number | null>;
  waitForLog(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Run `transfer-watch <args>` with the machine's current node and collect its output. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...opts.env }, cwd: opts.cwd ?? root });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
    if (opts.input !== undefined) proc.stdin.end(opts.input);
    else proc.stdin.end();
  });
}

/**
 * Start `transfer-watch run --config FILE` (server.listen should use port 0) and wait until its HTTP server
 * says where it listens.
 */
export async function startDaemonProcess(configFile: string, opts: { env?: NodeJS.ProcessEnv; args?: string[]; timeoutMs?: number } = {}): Promise<DaemonProcess> {
  const proc = spawn(process.execPath, [CLI, 'run', '--config', configFile, ...(opts.args ?? [])], {
    env: { ...process.env, ...opts.env },
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const stdoutLines: string[] = [];
  let stderr = '';
  const waiters: Array<() => void> = [];
  let buffer = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        const parsed: unknown = JSON.parse(line);
        if (parsed && typeof parsed === 'object') logs.push(parsed as Record<string, unknown>);
        else stdoutLines.push(line);
      } catch {
        stdoutLines.push(line);
      }
      for (const w of waiters.splice(0)) w();
    }
  });
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));

  const waitForLog = (pred: (line: Record<string, unknown>) => boolean, timeoutMs = 20_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for a log line; stderr: ${stderr}\nlast logs: ${JSON.stringify(logs.slice(-5))}`)), timeoutMs);
      const check = () => {
        const hit = logs.find(pred);
        if (hit) {
          clearTimeout(timer);
          resolve(hit);
          return;
        }
        if (proc.exitCode !== null || proc.signalCode !== null) {
          clearTimeout(timer);
          reject(new Error(`daemon exited with ${proc.exitCode ?? proc.signalCode}; stderr: ${stderr}`));
          return;
        }
        waiters.push(check);
      };
      check();
      void exited.then(() => waiters.push(check) && check());
    });

  const listening = await waitForLog((l) => l.msg === 'HTTP server listening', opts.timeoutMs ?? 20_000);
  return {
    proc,
    url: String(listening.url),
    logs,
    stdoutLines,
    stderr: () => stderr,
    exited,
    waitForLog,
    kill: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Poll `fn` until it returns a truthy value, or fail after `timeoutMs` with the last value seen. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 20_000, intervalMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await fn();
      if (last) return last as NonNullable<T>;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(last)} ${lastErr ? String(lastErr) : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * `transfer-watch demo --port 0` in a state folder of its own, once its status page is up: its URL, and `stop` (the
 * process killed by its pid, the folder removed).
 */
export async function startDemo(): Promise<{ url: string; stop: () => void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-demo-'));
  const demo = spawn(process.execPath, [CLI, 'demo', '--port', '0', '--state-dir', path.join(dir, 'state')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = (): void => {
    demo.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    let out = '';
    demo.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const url = await eventually(() => /status page:\s+(http:\/\/\S+)\//.exec(out)?.[1], 30_000);
    return { url, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

