import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import { CLI, eventually, startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';

/**
 * Signals that arrive while `transfer-watch run` is still starting (rebuilding rule windows from a slow
 * service after a restart) must not take Node's default action: SIGHUP reloads once started, SIGTERM
 * stops cleanly with exit 0.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built; required when CI=true`);

describe.skipIf(!existsSync(CLI))('transfer-watch run: signals during start-up', () => {
  let sim: RunningSimulator | undefined;
  let dir: string | undefined;
  const daemons: DaemonProcess[] = [];

  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.kill('SIGKILL');
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A daemon that has saved cursors, then a service so slow that the next start-up's history replay takes seconds. */
  async function slowRestartSetup(): Promise<string> {
    sim = await startSimulator({ generate: false });
    dir = mkdtempSync(join(tmpdir(), 'tw-run-signals-'));
    const configFile = join(dir, 'config.yaml');
    writeFileSync(join(dir, 'rules.yaml'), stringifyYaml({ rules: [{ name: 'Burst', type: 'error_burst', threshold: 3, window: '5m' }] }));
    writeFileSync(
      configFile,
      stringifyYaml({
        sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo' }],
        poll: { interval: '300ms', success_interval: '300ms', delay: '100ms', initial_lookback: '5m' },
        state: { dir: join(dir, 'state') },
        rule_files: [join(dir, 'rules.yaml')],
        receivers: [{ name: 'stdout', console: {} }],
        route: { receiver: 'stdout' },
        server: { listen: '127.0.0.1:0' },
      }),
    );
    const first = await startDaemonProcess(configFile);
    daemons.push(first);
    await eventually(async () => {
      const status = (await (await fetch(`${first.url}/api/v1/status`)).json()) as { sources: { streams: { cursor: string | null }[] }[] };
      return status.sources[0]?.streams.every((s) => s.cursor !== null);
    });
    expect(await first.kill('SIGTERM')).toBe(0);
    sim.setFaults({ delayMs: 3000, delayRate: 1 });
    return configFile;
  }

  it('SIGHUP while rule windows are rebuilt: the daemon lives on and reloads once started', async () => {
    const configFile = await slowRestartSetup();
    const d = await startDaemonProcess(configFile);
    daemons.push(d);
    expect((await fetch(`${d.url}/readyz`)).status).toBe(503);
    d.proc.kill('SIGHUP');
    // The start-up proper ends within tens of milliseconds of the HTTP server (the windows are rebuilt behind it,
    // readyz 503 until they are): the signal lands in it, or in the rebuild after it. Either way it is no default
    // action: the daemon lives on and reloads.
    const heard = await d.waitForLog((l) => l['msg'] === 'SIGHUP during start-up: reloading configuration and rules once started' || l['msg'] === 'SIGHUP: reloading configuration and rules');
    expect(String(heard['msg'])).toMatch(/^SIGHUP/);
    sim?.setFaults({ delayMs: 0 });
    await d.waitForLog((l) => l['msg'] === 'configuration reloaded', 30_000);
    expect(d.proc.exitCode).toBeNull();
    expect(d.proc.signalCode).toBeNull();
    await eventually(async () => (await fetch(`${d.url}/readyz`)).status === 200, 20_000);
  }, 60_000);

  it('SIGTERM while rule windows are rebuilt: exit 0', async () => {
    const configFile = await slowRestartSetup();
    const d = await startDaemonProcess(configFile);
    daemons.push(d);
    expect((await fetch(`${d.url}/readyz`)).status).toBe(503);
    expect(await d.kill('SIGTERM')).toBe(0);
    // Nothing of the history left unwritten, and the last line says so.
    expect(d.logs.find((l) => l['msg'] === 'stopped')).toMatchObject({ history_records_unwritten: 0 });
  }, 60_000);
});
