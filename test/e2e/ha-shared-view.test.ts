import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { HAVE_REDIS, REDIS_SERVER } from '../helpers/redis-server.js';
import { dailyCronAt, failure, secondAfter, success, until } from './helpers/e2e-daemon.js';
import { HaScenario } from './helpers/ha-scenario.js';

/**
 * Every replica serves the whole picture (issue 20): the page, `/api/v1/*` and `/api/v2/*` of each follower equal
 * the leader's, field by field, times aside — expected files, every source's streams, recent notifications,
 * silences and alerts, although each source is polled by one replica and only the leader evaluates and sends.
 */

if (!HAVE_REDIS) {
  if (process.env['CI'] === 'true') throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);
  console.warn(`skipping the HA shared-view e2e test: ${REDIS_SERVER} not found (apt-get install redis-server)`);
}

/** Fields that say when (they move with the clock, not with the picture). */
const TIME_FIELDS = new Set(['updatedAt', 'endsAt', 'lastSuccessfulPoll', 'cursor', 'dataLagSeconds', 'retryAt', 'at', 'startedAt', 'lastReloadAt']);

function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !TIME_FIELDS.has(k))
        .map(([k, v]) => [k, withoutTimes(v)]),
    );
  }
  return value;
}

/** The page's sections without this replica's own line (which replica it is) and without clock readings. */
function pageSections(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<(section|p) id="([a-z-]+)" data-section="[a-z-]+"[^>]*>([\s\S]*?)<\/\1>/g)) {
    const [, , id = '', body = ''] = m;
    out[id] = body
      .replace(/<div id="cluster"[\s\S]*?<\/table><\/div><\/div>/, '')
      .replace(/name="csrf" value="[^"]*"/g, '')
      .replace(/\d/g, '#');
  }
  return out;
}

async function picture(url: string): Promise<Record<string, unknown>> {
  const get = async (path: string): Promise<unknown> => {
    const res = await fetch(`${url}${path}`);
    expect(res.status, path).toBe(200);
    return res.json();
  };
  const status = (await get('/api/v1/status')) as { ha: Record<string, unknown> } & Record<string, unknown>;
  const { replica: _replica, leading: _leading, ...cluster } = status.ha;
  const alerts = ((await get('/api/v1/alerts')) as { alerts: Array<{ fingerprint: string }> }).alerts.sort((a, b) => a.fingerprint.localeCompare(b.fingerprint));
  return withoutTimes({
    alerts,
    status: { ...status, ha: cluster },
    v2alerts: await get('/api/v2/alerts'),
    v2groups: await get('/api/v2/alerts/groups'),
    v2silences: await get('/api/v2/silences'),
    page: pageSections(await (await fetch(`${url}/`)).text()),
  }) as Record<string, unknown>;
}

describe.skipIf(!existsSync(CLI) || !HAVE_REDIS)('every replica serves the same picture (issue 20)', () => {
  it('followers show the leader\'s expected files, every source\'s streams, recent notifications, silences and alerts', async () => {
    const s = await HaScenario.create(['east', 'west']);
    try {
      const deadline = secondAfter(25_000);
      s.write({
        rules: [
          { name: 'UserErrorBurst', type: 'error_burst', group_by: ['user'], threshold: 4, window: '5m' },
          {
            name: 'DailyStatement',
            type: 'missing_file',
            match: { file: ['STMT_*'] },
            deadline: dailyCronAt(deadline),
            // Inside the first start's look-back (5m): a window older than the data is not judged.
            window: '3m',
            for_each: { label: 'user', values: ['BANK1', 'BANK2'] },
          },
        ],
      });
      for (const r of ['a', 'b', 'c']) await s.start(r);
      const leader = await s.leader(['a', 'b', 'c']);
      // Each source is polled by one replica: the sources are spread, and at most one of them is the leader's.
      await eventually(async () => {
        const holders = (await s.status(leader)).sources;
        return holders['east'] && holders['west'] && holders['east'] !== holders['west'] ? holders : undefined;
      }, 20_000);
      s.inject('west', [success(Date.now() - 2_000, { INSTANCE: 'PROD01', USUARIO: 'BANK1', NOMEARQUIVO: 'STMT_BANK1.TXT' })]);
      s.inject('east', Array.from({ length: 5 }, (_, i) => failure(Date.now() - 3_000 + i * 100, { INSTANCE: 'PROD01', USUARIO: 'BANK7', NOMEARQUIVO: `F_${i}.RET` })));
      const follower = ['a', 'b', 'c'].find((r) => r !== leader) ?? 'a';
      expect(await s.silenceUser(follower, 'BANK9', 'partner maintenance')).toBe(200);
      await until(deadline + 1_000);
      // Both alerts notified: the burst and BANK2's statement, missing at its deadline.
      await eventually(
        async () =>
          s.payloads().some((p) => p.alerts.some((a) => a.labels['alertname'] === 'UserErrorBurst')) &&
          s.payloads().some((p) => p.alerts.some((a) => a.labels['alertname'] === 'DailyStatement' && a.labels['user'] === 'BANK2')),
        30_000,
      );

      const reference = await picture(s.replica(leader).url);
      // What the leader shows is the whole picture, not only what it polls itself.
      const page = reference['page'] as Record<string, string>;
      expect(page['expected']).toContain('BANK#');
      expect(page['expected']).toMatch(/STMT_\*/);
      expect(page['notifications']).toContain('UserErrorBurst');
      expect(page['silences']).toContain('partner maintenance');
      const sources = (reference['status'] as { sources: Array<{ name: string; streams: unknown[] }> }).sources;
      expect(sources.map((x) => [x.name, x.streams.length])).toEqual([
        ['east', 2],
        ['west', 2],
      ]);
      // Followers converge on it within the board's beat (a second), field by field.
      for (const r of ['a', 'b', 'c'].filter((x) => x !== leader)) {
        await eventually(async () => JSON.stringify(await picture(s.replica(r).url)) === JSON.stringify(await picture(s.replica(leader).url)), 10_000, 200).catch(
          async () => expect(await picture(s.replica(r).url)).toEqual(await picture(s.replica(leader).url)),
        );
      }
    } finally {
      await s.cleanup();
    }
  }, 120_000);
});
