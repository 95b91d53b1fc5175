import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import type { ServiceRecord } from '../../src/source/transfer.js';
import { eventually } from '../helpers/daemon-process.js';
import {
  errorBurst,
  metricSum,
  recordResult,
  sleep,
  startDaemonProcess,
  startWebhook,
  stopDaemon,
  tally,
  tempDir,
  writeYaml,
  type DaemonProcess,
  type Webhook,
} from './harness.js';

/**
 * The state directory misbehaves. CI runs as root, where chmod 0500 does not stop writes, so the directory is
 * made unwritable for everyone by replacing it with a regular file of the same name (every write then fails
 * with ENOTDIR). And state files are corrupted between two runs.
 */

const THRESHOLD = 3;
const isError = (l: Record<string, unknown>): boolean => l['level'] === 'error' || l['level'] === 'fatal';

const burst = (user: string): Partial<ServiceRecord>[] => errorBurst(user, THRESHOLD);

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setup(name: string): Promise<{ sim: RunningSimulator; hook: Webhook; config: string; stateDir: string }> {
  const tmp = tempDir(name);
  cleanups.push(() => tmp.cleanup());
  const sim = await startSimulator({ generate: false, seed: 9 });
  cleanups.push(() => sim.close());
  const hook = await startWebhook();
  cleanups.push(() => hook.close());
  const stateDir = join(tmp.dir, 'state');
  const rules = writeYaml(join(tmp.dir, 'rules.yaml'), {
    rules: [{ name: 'RelState', type: 'error_burst', match: { user: ['RELS*'] }, group_by: ['user'], threshold: THRESHOLD, window: '1h', severity: 'critical' }],
  });
  const config = writeYaml(join(tmp.dir, 'config.yaml'), {
    sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo', timeout: '2s' }],
    poll: { interval: '300ms', success_interval: '1s', delay: '500ms', overlap: '2m', page_size: 100, initial_lookback: '10m', stale_after: '5m' },
    state: { dir: stateDir },
    rule_files: [rules],
    receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
    route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '300ms', group_interval: '1s', repeat_interval: '1h' },
    server: { listen: '127.0.0.1:0' },
    log: { level: 'info' },
  });
  return { sim, hook, config, stateDir };
}

describe('reliability: the state directory', () => {
  it('becomes unwritable: the daemon keeps running, logs errors and exposes transfer_watch_state_write_ok 0', async () => {
    const { sim, hook, config, stateDir } = await setup('unwritable');
    let daemon: DaemonProcess | undefined = await startDaemonProcess(config);
    cleanups.push(() => stopDaemon(daemon));
    const d = daemon;
    sim.inject(burst('RELS0'));
    await eventually(() => hook.keys().includes('firing:RelState{user=RELS0}'), 30_000);
    expect(await metricSum(d.url, 'transfer_watch_state_write_ok')).toBe(1);

    // Replace the directory by a regular file of the same name.
    renameSync(stateDir, `${stateDir}.aside`);
    writeFileSync(stateDir, 'not a directory\n');
    const errorsBefore = d.logs.filter((l) => isError(l)).length;
    sim.inject(burst('RELS1'));

    await eventually(async () => (await metricSum(d.url, 'transfer_watch_state_write_ok')) === 0, 30_000);
    // Loudly: error-level log lines that name the state.
    await eventually(() => d.logs.filter((l) => isError(l) && /persist|state/i.test(String(l['msg']))).length > errorsBefore, 30_000);
    // Still alive, still polling and still notifying.
    expect((await fetch(`${d.url}/healthz`)).status).toBe(200);
    await eventually(() => hook.keys().includes('firing:RelState{user=RELS1}'), 30_000);
    const status = (await (await fetch(`${d.url}/api/v1/status`)).json()) as { state?: { writable?: boolean; lastError?: string } };
    expect(status.state?.writable).toBe(false);
    expect(status.state?.lastError).toMatch(/ENOTDIR|not a directory/i);

    // The directory comes back: writes succeed again and the metric says so.
    rmSync(stateDir);
    renameSync(`${stateDir}.aside`, stateDir);
    sim.inject(burst('RELS2'));
    await eventually(async () => (await metricSum(d.url, 'transfer_watch_state_write_ok')) === 1, 30_000);
    await eventually(() => hook.keys().includes('firing:RelState{user=RELS2}'), 30_000);
    await sleep(2_000);
    expect(d.proc.exitCode, 'the daemon never exited').toBeNull();

    const expected = ['RELS0', 'RELS1', 'RELS2'].map((u) => `firing:RelState{user=${u}}`);
    const result = tally(expected, hook.keys());
    recordResult({
      scenario: 'state dir unwritable',
      faults: 'state dir replaced by a regular file (ENOTDIR), then restored',
      ...result,
      ...(result.details ? { note: result.details } : {}),
    });
    await stopDaemon(daemon, 'SIGTERM');
    daemon = undefined;
    expect(result.details).toBe('');
  });

  it('has corrupted state files: moved aside with a warning, no crash loop', async () => {
    const { sim, hook, config, stateDir } = await setup('corrupt');
    sim.inject(burst('RELS0'));
    let daemon: DaemonProcess | undefined = await startDaemonProcess(config);
    cleanups.push(() => stopDaemon(daemon));
    await eventually(() => hook.keys().includes('firing:RelState{user=RELS0}'), 30_000);
    await stopDaemon(daemon, 'SIGTERM');

    // Damage every state file as a crash of a less careful writer, or a disk error, would.
    const files = readdirSync(stateDir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) writeFileSync(join(stateDir, f), '{"version":1,"entr');

    daemon = await startDaemonProcess(config);
    const d = daemon;
    await eventually(async () => (await fetch(`${d.url}/readyz`)).status === 200, 30_000);
    const warnings = d.logs.filter((l) => String(l['msg']).includes('corrupt state file'));
    expect(warnings.length, 'one loud warning per corrupt file').toBe(files.length);
    expect(warnings.every((w) => ['warn', 'error', 'fatal'].includes(String(w['level'])))).toBe(true);
    const aside = readdirSync(stateDir).filter((f) => f.includes('.corrupt-'));
    expect(aside.length, 'every corrupt file moved aside').toBe(files.length);
    // It works on: a new alert is notified.
    sim.inject(burst('RELS1'));
    await eventually(() => hook.keys().includes('firing:RelState{user=RELS1}'), 30_000);
    await sleep(1_500);
    await stopDaemon(daemon, 'SIGTERM');

    // No crash loop: the next start finds healthy files and warns no more.
    daemon = await startDaemonProcess(config);
    const d2 = daemon;
    await eventually(async () => (await fetch(`${d2.url}/readyz`)).status === 200, 30_000);
    expect(d2.logs.filter((l) => String(l['msg']).includes('corrupt state file'))).toEqual([]);
    await sleep(1_500);
    await stopDaemon(daemon, 'SIGTERM');
    daemon = undefined;
    expect(existsSync(stateDir)).toBe(true);

    // With its notification log destroyed, the daemon may announce RELS0 once more; that is the price of the
    // corruption, not a duplicate. RELS1 (after the corruption) must arrive exactly once.
    const keys = hook.keys().filter((k) => !k.includes('RELS0'));
    const result = tally(['firing:RelState{user=RELS1}'], keys);
    recordResult({
      scenario: 'state files corrupted',
      faults: `${files.length} state files truncated between runs, then 2 restarts`,
      ...result,
      ...(result.details ? { note: result.details } : {}),
    });
    expect(result.details).toBe('');
  });
});
