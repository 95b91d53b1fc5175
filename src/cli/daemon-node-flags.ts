/**
 * The node flags the daemon runs best with: a 4 MB semi-space instead of node's 16 MB (up to 64 MB on Node 24
 * with much memory), and no Maglev, whose compile jobs hold native memory. Neither caps the heap. What they save
 * is measured by the shipped-rules bench line (docs/benchmarks.md, "Fifth round"). The container image passes
 * the same flags on its ENTRYPOINT (a Dockerfile test keeps the two equal); NODE_OPTIONS may carry them too.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--no-maglev'];

/** Commands that run for days, where the flags pay; the others finish before the young generation matters. */
const LONG_RUNNING_COMMANDS = new Set(['run', 'demo']);

const SEMI_SPACE = /(^|\s)--max[-_]semi[-_]space[-_]size(=|\s|$)/;

/** What `restartWithDaemonNodeFlags` reads of the process: `process` itself outside tests. */
export interface RestartableProcess {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** `process.execve` (Node >= 22.15 and 23.11, not on Windows): replaces the process image, same pid. */
  readonly execve?: (file: string, args?: readonly string[], env?: NodeJS.ProcessEnv) => never;
}

/**
 * Start node again, in place, with DAEMON_NODE_FLAGS when a long-running command was started without them.
 *
 * The semi-space size can only be set on node's command line, and `transfer-watch` is started as an npm bin
 * (`#!/usr/bin/env node`), which passes none. `process.execve` replaces the process image: same pid, same
 * stdio, no second process, so signals, supervisors and container runtimes see nothing. Where it does not
 * exist (Node 20, Windows) the daemon runs with node's defaults, as before. It is skipped when the operator chose
 * a semi-space size (on the command line or in NODE_OPTIONS), or when node already runs with these flags, so
 * it happens at most once. Must run before anything is written or opened: nothing survives the exec but the
 * environment and the file descriptors.
 */
export function restartWithDaemonNodeFlags(p: RestartableProcess): boolean {
  if (typeof p.execve !== 'function') return false;
  if (!LONG_RUNNING_COMMANDS.has(p.argv[2] ?? '')) return false;
  if (p.execArgv.some((arg) => SEMI_SPACE.test(arg)) || SEMI_SPACE.test(p.env['NODE_OPTIONS'] ?? '')) return false;
  return p.execve(p.execPath, [p.execPath, ...DAEMON_NODE_FLAGS, ...p.execArgv, ...p.argv.slice(1)], p.env);
}
