import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI, eventually, startDemo } from '../helpers/daemon-process.js';

/**
 * The demo's first seconds through the built binary, as a newcomer sees them: nothing in the history that was
 * judged on a window the daemon had not finished reading (BankQuiet fired for three banks and resolved 0.3 s later
 * on every start while the 9 h of history were still being read), and one clock in every answer — the alerts APIs
 * that amtool and Grafana read on the same simulated morning as the status and the history.
 */

const eventSchema = z.object({ at: z.string(), labels: z.record(z.string(), z.string()), state: z.string().optional() });
const MINUTE = 60_000;

describe.skipIf(!existsSync(CLI))('the demo’s first seconds', () => {
  it('records no alert judged on a half-read history, and answers on one clock', async () => {
    const { url, stop } = await startDemo();
    try {
      const status = z.object({ startedAt: z.string() }).parse(await (await fetch(`${url}/api/v1/status`)).json());
      const started = Date.parse(status.startedAt);
      // The first evaluations after the 9 h of history are read: the burst of the demo's morning is firing.
      const v1 = await eventually(async () => {
        const body = z
          .object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), state: z.string(), activeAt: z.string() })) })
          .parse(await (await fetch(`${url}/api/v1/alerts`)).json());
        return body.alerts.some((a) => a.labels['alertname'] === 'TransferErrorBurst' && a.state === 'firing') ? body.alerts : undefined;
      }, 30_000);
      // One clock: every time an API answers is on the demo's morning, not the wall's hours away.
      for (const a of v1) expect(Math.abs(Date.parse(a.activeAt) - started), `${a.labels['alertname']} activeAt ${a.activeAt}`).toBeLessThan(10 * MINUTE);
      const v2 = z.array(z.object({ startsAt: z.string(), updatedAt: z.string() })).parse(await (await fetch(`${url}/api/v2/alerts`)).json());
      expect(v2.length).toBeGreaterThan(0);
      for (const a of v2) {
        expect(Math.abs(Date.parse(a.startsAt) - started)).toBeLessThan(10 * MINUTE);
        expect(Math.abs(Date.parse(a.updatedAt) - started)).toBeLessThan(10 * MINUTE);
      }

      // The history is written in batches after the evaluation: wait for the firing burst to be recorded.
      const history = await eventually(async () => {
        const body = z.object({ events: z.array(eventSchema) }).parse(await (await fetch(`${url}/api/v1/history/alerts?limit=500`)).json());
        return body.events.some((e) => e.labels['alertname'] === 'TransferErrorBurst') ? body : undefined;
      }, 15_000);
      for (const e of history.events) expect(Math.abs(Date.parse(e.at) - started)).toBeLessThan(10 * MINUTE);
      // Every bank sent or failed something in the two hours before 07:59: "no transfer in 2h" is never true here.
      expect(history.events.filter((e) => e.labels['alertname'] === 'BankQuiet')).toEqual([]);
    } finally {
      stop();
    }
  }, 60_000);
});
