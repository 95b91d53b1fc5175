import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Locating the real Prometheus binaries (Debian's `prometheus` package). Under CI=true a missing binary
 * is a failure with a clear message; elsewhere the tests that need it are skipped and say why.
 */
export function findBinary(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter).concat(['/usr/bin', '/usr/local/bin'])) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

export interface BinaryAvailability {
  path: string | undefined;
  /** Why tests needing it are skipped; undefined when present. */
  skipReason: string | undefined;
}

/** Throws under CI when the binary is missing (so the suite fails loudly); otherwise reports a skip reason. */
export function requireBinary(name: string): BinaryAvailability {
  const path = findBinary(name);
  if (path) return { path, skipReason: undefined };
  const message = `${name} not found on PATH (install Debian's "prometheus" package: apt-get install prometheus)`;
  if (process.env['CI'] === 'true') throw new Error(`${message}; required when CI=true`);
  console.warn(`skipping tests that need ${name}: ${message}`);
  return { path: undefined, skipReason: message };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a binary with optional stdin and collect its output. */
export function runBinary(path: string, args: readonly string[], stdin?: string, cwd?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'], cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}
