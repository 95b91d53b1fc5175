import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { startCaptureServer } from '../helpers/capture-server.js';
import { Scenario, dailyCronAt, secondAfter, sleep, success } from './helpers/e2e-daemon.js';
import { webhookPayloadSchema } from './helpers/payloads.js';

/**
 * A restart changes nothing (contract section 11b, issue 50): a missing file's alert that fired before a SIGTERM and
 * a kill -9 is firing after each, with its startsAt, never resolved nor notified again; it resolves when the file
 * arrives late, saying so.
 */

const ROUTE = { receiver: 'hook', group_by: ['alertname'], group_wait: '500ms', group_interval: '2s', repeat_interval: '1h' };

describe.skipIf(!existsSync(CLI))('a restart changes nothing', () => {
  it('keeps a missing file firing across SIGTERM and kill -9, and resolves it only when the file comes', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('restart-missing');
    try {
      const deadline = secondAfter(8_000);
      s.write({
        rules: [
          {
            name: 'StatementMissing',
            type: 'missing_file',
            match: { user: ['BANK1'], file: ['EXTRATO_*.RET'] },
            deadline: dailyCronAt(deadline),
            timezone: 'UTC',
            window: '1m',
            severity: 'critical',
          },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: ROUTE,
      });
      await s.start();
      const firing = await eventually(async () => (await s.alerts()).find((a) => a.labels['alertname'] === 'StatementMissing'), 30_000);
      await eventually(() => hook.requests.length >= 1, 20_000);

      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        await s.daemon!.kill(signal);
        await s.start();
        await s.waitPolledPast(Date.now());
        await sleep(4_000);
        const after = (await s.alerts()).find((a) => a.labels['alertname'] === 'StatementMissing');
        expect(after?.state, `after ${signal}`).toBe('firing');
        expect(after?.activeAt, `after ${signal}`).toBe(firing.activeAt);
        expect(hook.requests.map((r) => webhookPayloadSchema.parse(JSON.parse(r.body)).status), `after ${signal}`).toEqual(['firing']);
      }

      // The file comes late: resolved, saying so.
      s.inject([success(Date.now(), { USUARIO: 'BANK1', NOMEARQUIVO: 'EXTRATO_LATE.RET' })]);
      await eventually(() => hook.requests.length >= 2, 20_000);
      const resolved = webhookPayloadSchema.parse(JSON.parse(hook.requests[1]!.body));
      expect(resolved.status).toBe('resolved');
      expect(resolved.alerts[0]?.annotations['resolution']).toMatch(/^arrived late at /);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 120_000);
});
