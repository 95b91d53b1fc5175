import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { DAEMON_NODE_FLAGS, restartWithDaemonNodeFlags, type RestartableProcess } from '../../src/cli/daemon-node-flags.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import { CLI, startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';

const NODE = '/usr/bin/node';

/** A process as node would show it, whose execve records its call instead of replacing anything. */
function fakeProcess(o: { argv: string[]; execArgv?: string[]; nodeOptions?: string; execve?: boolean }): RestartableProcess & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    execPath: NODE,
    execArgv: o.execArgv ?? [],
    argv: [NODE, '/usr/lib/node_modules/transfer-watch/dist/cli/main.js', ...o.argv],
    env: o.nodeOptions === undefined ? { HOME: '/root' } : { HOME: '/root', NODE_OPTIONS: o.nodeOptions },
    calls,
    ...(o.execve === false
      ? {}
      : {
          execve: ((...args: unknown[]) => {
            calls.push(args);
            return undefined as never;
          }) as RestartableProcess['execve'],
        }),
  };
}

describe('restartWithDaemonNodeFlags', () => {
  it('starts `run` and `demo` again with the daemon flags before node’s own, keeping the arguments and environment', () => {
    for (const command of ['run', 'demo']) {
      const p = fakeProcess({ argv: [command, '--config', 'my config.yaml'], execArgv: ['--enable-source-maps'] });
      restartWithDaemonNodeFlags(p);
      expect(p.calls).toEqual([
        [NODE, [NODE, '--max-semi-space-size=4', '--no-maglev', '--enable-source-maps', '/usr/lib/node_modules/transfer-watch/dist/cli/main.js', command, '--config', 'my config.yaml'], p.env],
      ]);
    }
  });

  it('leaves short commands, and nodes without execve (Node 20, Windows), as they are', () => {
    for (const argv of [['check', '--config', 'c.yaml'], ['test-rules', 'r.test.yaml'], ['simulate'], ['--version'], []]) {
      const p = fakeProcess({ argv });
      expect(restartWithDaemonNodeFlags(p)).toBe(false);
      expect(p.calls).toEqual([]);
    }
    const old = fakeProcess({ argv: ['run'], execve: false });
    expect(restartWithDaemonNodeFlags(old)).toBe(false);
  });

  it('restarts at most once, and never over the operator’s own semi-space size', () => {
    const cases = [
      fakeProcess({ argv: ['run'], execArgv: [...DAEMON_NODE_FLAGS] }),
      fakeProcess({ argv: ['run'], execArgv: ['--max-semi-space-size=16'] }),
      fakeProcess({ argv: ['run'], execArgv: ['--max_semi_space_size=32'] }),
      fakeProcess({ argv: ['run'], nodeOptions: '--enable-source-maps --max-semi-space-size=8' }),
    ];
    for (const p of cases) {
      expect(restartWithDaemonNodeFlags(p)).toBe(false);
      expect(p.calls).toEqual([]);
    }
    // Other NODE_OPTIONS do not stop it.
    const withOptions = fakeProcess({ argv: ['run'], nodeOptions: '--max-old-space-size=512' });
    restartWithDaemonNodeFlags(withOptions);
    expect(withOptions.calls).toHaveLength(1);
  });
});

describe('transfer-watch run, started without node flags (the built CLI, a real process)', () => {
  let sim: RunningSimulator | undefined;
  let dir: string | undefined;
  let daemon: DaemonProcess | undefined;

  afterEach(async () => {
    await daemon?.kill('SIGKILL');
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs with the daemon flags where node can restart itself in place (same pid), and stops cleanly on SIGTERM', async () => {
    sim = await startSimulator({ generate: false });
    dir = mkdtempSync(join(tmpdir(), 'tw-node-flags-'));
    const configFile = join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      stringifyYaml({
        sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo' }],
        state: { dir: join(dir, 'state') },
        receivers: [{ name: 'stdout', console: {} }],
        route: { receiver: 'stdout' },
        server: { listen: '127.0.0.1:0' },
      }),
    );
    daemon = await startDaemonProcess(configFile);
    const cmdline = readFileSync(`/proc/${daemon.proc.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const canRestart = typeof (process as { execve?: unknown }).execve === 'function';
    expect(cmdline.slice(1)).toEqual([...(canRestart ? DAEMON_NODE_FLAGS : []), CLI, 'run', '--config', configFile]);
    expect(await daemon.kill('SIGTERM')).toBe(0);
  });
});
