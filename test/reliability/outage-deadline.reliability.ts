import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import type { ServiceRecord } from '../../src/source/transfer.js';
import { eventually } from '../helpers/daemon-process.js';
import { recordResult, sleep, startDaemonProcess, startWebhook, stopDaemon, tally, tempDir, writeYaml, type DaemonProcess, type Webhook } from './harness.js';

/**
 * The service is down across a missing_file deadline (cron every minute, UTC, window 1m):
 * - RelFileA arrives every minute at :50; the one for the deadline D1 arrives while the service is down. After
 *   the outage it must be found: no missing-file alert, ever.
 * - RelFileB arrives every minute at :30, except before D1. It must not be claimed during the outage
 *   (TransferWatchSourceDown fires instead); once data is back it fires, and resolves when the next deadline has its
 *   file (the one at D1+30s: with windows of a minute back to back, it is that deadline's, never D1's late file —
 *   one file, one deadline, contract 11c), saying so.
 */

const MINUTE = 60_000;
const apiAlertsSchema = z.object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), state: z.string() })) });

describe('reliability: the service is down across a missing_file deadline', () => {
  const tmp = tempDir('outage');
  let sim: RunningSimulator | undefined;
  let hook: Webhook | undefined;
  let daemon: DaemonProcess | undefined;

  afterAll(async () => {
    await stopDaemon(daemon);
    await hook?.close();
    await sim?.close();
    tmp.cleanup();
  });

  it('claims no missing file during the outage, fires SourceDown, decides correctly once data is back', async () => {
    const t0 = Date.now();
    const d1 = Math.ceil((t0 + 40_000) / MINUTE) * MINUTE;
    const outageStart = d1 - 25_000;
    const outageEnd = d1 + 15_000;
    sim = await startSimulator({ generate: false, seed: 5 });
    const records: Partial<ServiceRecord>[] = [];
    for (let m = d1 - 12 * MINUTE; m <= d1 + 3 * MINUTE; m += MINUTE) {
      const stamp = new Date(m).toISOString().slice(11, 16).replace(':', '');
      records.push({ DATAHORA: new Date(m - 10_000).toISOString(), USUARIO: 'RELMF', EVENTO: 7, RESULTADO: 0, NOMEARQUIVO: `/in/RELMF/RELA_${stamp}.RET` });
      if (m !== d1) records.push({ DATAHORA: new Date(m - 30_000).toISOString(), USUARIO: 'RELMF', EVENTO: 7, RESULTADO: 0, NOMEARQUIVO: `/in/RELMF/RELB_${stamp}.RET` });
    }
    sim.inject(records);
    hook = await startWebhook();

    const missing = (name: string, pattern: string): Record<string, unknown> => ({
      name,
      type: 'missing_file',
      match: { user: ['RELMF'], event: ['reception'], file: [pattern] },
      deadline: '* * * * *',
      timezone: 'UTC',
      window: '1m',
      min_count: 1,
      severity: 'warning',
    });
    const rules = writeYaml(join(tmp.dir, 'rules.yaml'), { rules: [missing('RelFileA', '*RELA_*.RET'), missing('RelFileB', '*RELB_*.RET')] });
    const config = writeYaml(join(tmp.dir, 'config.yaml'), {
      sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo', timeout: '2s', retries: 1 }],
      poll: { interval: '500ms', success_interval: '500ms', delay: '1s', overlap: '2m', page_size: 100, initial_lookback: '15m', stale_after: '8s' },
      state: { dir: join(tmp.dir, 'state') },
      rule_files: [rules],
      receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
      route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '500ms', group_interval: '1s', repeat_interval: '1h' },
      server: { listen: '127.0.0.1:0' },
      log: { level: 'info' },
    });
    daemon = await startDaemonProcess(config);
    const d = daemon;

    // Watch the alert API through the whole outage: RelFileB may not even be pending while data is missing.
    const claimedDuringOutage = new Set<string>();
    let sourceDownSeen = false;
    const watchAlerts = async (): Promise<void> => {
      const body = apiAlertsSchema.parse(await (await fetch(`${d.url}/api/v1/alerts`)).json());
      for (const a of body.alerts) {
        const name = a.labels['alertname'] ?? '';
        if (name === 'TransferWatchSourceDown' && a.state === 'firing') sourceDownSeen = true;
        if (name.startsWith('RelFile') && Date.now() < outageEnd) claimedDuringOutage.add(name);
      }
    };

    while (Date.now() < outageStart) {
      await watchAlerts();
      await sleep(500);
    }
    sim.setFaults({ down: true });
    while (Date.now() < outageEnd) {
      await watchAlerts();
      await sleep(500);
    }
    sim.setFaults({ down: false });

    const expected = ['firing:TransferWatchSourceDown', 'resolved:TransferWatchSourceDown', 'firing:RelFileB', 'resolved:RelFileB'];
    try {
      await eventually(() => {
        const got = new Set(hook?.keys());
        return expected.every((k) => got.has(k));
      }, 60_000, 250);
    } catch {
      /* the tally says what is missing */
    }
    await sleep(3_000);
    const result = tally(expected, hook.keys());
    const note = [claimedDuringOutage.size ? `claimed during the outage: ${[...claimedDuringOutage].join(', ')}` : '', result.details].filter(Boolean).join('; ');
    recordResult({
      scenario: 'outage across a missing_file deadline',
      faults: `service down (503) ${new Date(outageStart).toISOString().slice(11, 19)}-${new Date(outageEnd).toISOString().slice(11, 19)} UTC, deadline ${new Date(d1).toISOString().slice(11, 19)}`,
      ...result,
      falseAlerts: result.falseAlerts + claimedDuringOutage.size,
      ...(note ? { note } : {}),
    });

    expect([...claimedDuringOutage], 'missing-file alerts during the outage').toEqual([]);
    expect(sourceDownSeen, 'TransferWatchSourceDown seen firing in the API').toBe(true);
    expect(result.details).toBe('');
    // The resolved message says which file ended it, and when (with its zone): the next deadline's, on time.
    const resolvedB = hook.requests.map((r) => r.body).find((b) => b.includes('"resolved"') && b.includes('RelFileB'));
    expect(resolvedB).toMatch(/the next file arrived at [^"]*UTC, on time for the deadline [^"]*UTC; the deadline [^"]*UTC stays missing/);
  });
});
