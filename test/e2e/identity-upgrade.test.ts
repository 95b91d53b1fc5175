import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../../src/config/schema.js';
import { recordIdentityV1 } from '../../src/source/record-identity.js';
import { TransferHistoryClient } from '../../src/source/transfer-history-client.js';
import type { Transfer } from '../../src/source/transfer.js';
import { silentLogger } from '../../src/util/logger.js';
import { SeenTransfers } from '../../src/util/seen-transfers.js';
import { startCaptureServer } from '../helpers/capture-server.js';
import { CLI } from '../helpers/daemon-process.js';
import { MFT_PASSWORD, Scenario, failure, success } from './helpers/e2e-daemon.js';

/**
 * An upgrade across a change of the record identity, through the built daemon: state saved by a version whose ids
 * were SHA-256 (version 1, no `identity` in the saved cursors) must not make the new version hand the last
 * overlap's transfers on again (counted twice, alerted on twice).
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first); required when CI=true`);

/** `transfer_watch_records_total` for one stream of source `sim`, 0 when the series is not there yet. */
async function recordsTotal(s: Scenario, stream: string): Promise<number> {
  return (await s.metric('transfer_watch_records_total', { source: 'sim', stream })) ?? 0;
}

/** Every transfer the simulator serves in [start, end], both streams, as the daemon's client reads them. */
async function servedTransfers(s: Scenario, start: number, end: number): Promise<Transfer[]> {
  const client = new TransferHistoryClient({ source: sourceSchema.parse({ name: 'sim', base_url: s.sim.url, username: 'watch', password: MFT_PASSWORD }), logger: silentLogger() });
  const out: Transfer[] = [];
  for (const results of [-1, 0] as const) {
    for await (const page of client.pages({ start, end, results, limit: 1000 })) out.push(...page.transfers);
  }
  return out;
}

describe.skipIf(!existsSync(CLI))('upgrading across a new record identity (the built daemon)', () => {
  it('a restart on cursors saved with version 1 ids hands nothing of the last overlap on again, and saves version 2', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create('identity-upgrade');
    try {
      s.write({
        rules: [{ name: 'Burst', type: 'error_burst', match: { mft_instance: ['PROD*'] }, group_by: ['user'], threshold: 1000, window: '10m' }],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: { receiver: 'hook', group_wait: '0s' },
      });
      await s.start();
      const t = Date.now();
      s.inject([
        ...[0, 1, 2, 3].map((i) => failure(t - 3000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK1', NOMEARQUIVO: `F_${i}.RET` })),
        ...[0, 1, 2].map((i) => success(t - 3000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK2', NOMEARQUIVO: `S_${i}.RET` })),
      ]);
      await s.waitPolledPast(t + 500);
      expect([await recordsTotal(s, 'failures'), await recordsTotal(s, 'successes')]).toEqual([4, 3]);
      expect(await s.daemon!.kill('SIGTERM')).toBe(0);

      // The cursors as version 1 saved them: the same cursors, the overlap's ids by SHA-256, no identity version.
      const file = join(s.stateDir, 'source.sim.cursors.json');
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { cursor: number; identity?: number; seen: unknown }>;
      expect(Object.values(saved).map((st) => st.identity)).toEqual([2, 2]);
      const served = await servedTransfers(s, t - 60_000, Date.now());
      expect(served).toHaveLength(7);
      for (const [id, stream] of Object.entries(saved)) {
        const seen = new SeenTransfers();
        for (const tr of served.filter((x) => (id.endsWith('/failures') ? x.result === 'error' : x.result === 'success'))) seen.add(recordIdentityV1(tr.record), tr.time);
        saved[id] = { cursor: stream.cursor, seen: seen.toJSON() };
      }
      writeFileSync(file, JSON.stringify(saved));

      // The restarted daemon reads the overlap again (its windows start 30 s before the cursors): nothing is new.
      await s.start();
      await s.waitPolledPast(Date.now());
      expect([await recordsTotal(s, 'failures'), await recordsTotal(s, 'successes')]).toEqual([0, 0]);
      // One transfer that is new is still counted, and the cursors are saved with version 2 ids from then on.
      s.inject([failure(Date.now() - 500, { INSTANCE: 'PROD01', USUARIO: 'BANK1', NOMEARQUIVO: 'NEW.RET' })]);
      await s.waitPolledPast(Date.now());
      expect(await recordsTotal(s, 'failures')).toBe(1);
      const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { identity?: number }>;
      expect(Object.values(after).map((st) => st.identity)).toEqual([2, 2]);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  });
});
