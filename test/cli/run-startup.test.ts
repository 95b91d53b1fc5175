import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import { runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { freePort } from '../helpers/free-port.js';

/** Start-up refusals of `transfer-watch run` (issue 17): each says why, and what to do, and exits 2. */
describe('transfer-watch run refuses to start, clearly', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function configFile(extra: Record<string, unknown>, simUrl = 'http://127.0.0.1:1'): { file: string; dir: string } {
    const dir = mkdtempSync(join(tmpdir(), 'tw-start-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      stringifyYaml({
        sources: [{ name: 'prod', base_url: simUrl, username: 'demo', password: 'demo' }],
        state: { dir: join(dir, 'state') },
        server: { listen: '127.0.0.1:0' },
        ...extra,
      }),
    );
    return { file, dir };
  }

  it('names the Redis URL it cannot reach, never its password', async () => {
    const port = await freePort();
    const { file } = configFile({ ha: { redis: { url: `redis://default:SuperSecretRedisPw@127.0.0.1:${port}/3` }, lease_ttl: '3s' } });
    const r = await runCli(['run', '--config', file]);
    expect(r.code).toBe(2);
    const out = r.stdout + r.stderr;
    expect(out).toContain(`cannot reach Redis at redis://127.0.0.1:${port}/3`);
    expect(out).not.toContain('SuperSecretRedisPw');
  }, 30_000);

  it('a second process on the same state.dir without ha: refuses, naming the first', async () => {
    let sim: RunningSimulator | undefined = await startSimulator({ generate: false });
    cleanups.push(async () => {
      await sim?.close();
      sim = undefined;
    });
    const { file } = configFile({}, sim.url);
    const first: DaemonProcess = await startDaemonProcess(file);
    cleanups.push(() => first.kill('SIGKILL').then(() => undefined));
    const second = await runCli(['run', '--config', file]);
    expect(second.code).toBe(2);
    expect(second.stdout + second.stderr).toContain(`is in use by process ${first.proc.pid}`);
    // The first one ends; the lock goes with a clean stop, and a later start takes it.
    expect(await first.kill('SIGTERM')).toBe(0);
    const third: DaemonProcess = await startDaemonProcess(file);
    cleanups.push(() => third.kill('SIGKILL').then(() => undefined));
    // A lock left by a process killed with -9 is taken over (its pid is gone).
    await third.kill('SIGKILL');
    const fourth: DaemonProcess = await startDaemonProcess(file);
    cleanups.push(() => fourth.kill('SIGKILL').then(() => undefined));
    expect(fourth.proc.pid).toBeGreaterThan(0);
  }, 60_000);
});
