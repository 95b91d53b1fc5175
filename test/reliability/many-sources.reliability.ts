import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually } from '../helpers/daemon-process.js';
import { failure } from '../e2e/helpers/e2e-daemon.js';
import { HaScenario, LEASE_TTL_MS } from '../e2e/helpers/ha-scenario.js';
import { recordResult, sleep, tally, webhookKeys } from './harness.js';

/**
 * Many sources on three replicas (issue 25): 100 services, each its own simulator over HTTP, polled by three real
 * replicas on Redis (34 / 33 / 33). Every source gets a burst of failures for a user of its own; then a replica that
 * is not the leader is killed (-9) and every source gets a second burst at once. Each burst must be notified
 * exactly once, the dead replica's sources polled again by the others within lease_ttl + interval (+ the second
 * the shared status takes to show it).
 */
const SOURCES = 100;
const POLL_INTERVAL_MS = 2_000;
const THRESHOLD = 3;

const statusSchema = z.object({
  ha: z.object({ leader: z.string().nullable(), sources: z.record(z.string(), z.string().nullable()) }),
  sources: z.array(z.object({ name: z.string(), streams: z.array(z.object({ lastSuccessfulPoll: z.string().nullable() })) })),
});

const names = Array.from({ length: SOURCES }, (_, i) => `s${String(i).padStart(3, '0')}`);

describe('reliability: many sources on three replicas', () => {
  let s: HaScenario | undefined;
  afterAll(async () => {
    await s?.cleanup();
  });

  it(`${SOURCES} sources, a replica killed: every burst notified once, its sources polled again by the others`, async () => {
    s = await HaScenario.create(names);
    const scenario = s;
    scenario.write({
      rules: [{ name: 'ManySourcesBurst', type: 'error_burst', group_by: ['user'], threshold: THRESHOLD, window: '10m', severity: 'critical' }],
      route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '1s', group_interval: '2s', repeat_interval: '1h' },
      extra: {
        poll: { interval: `${POLL_INTERVAL_MS}ms`, success_interval: `${POLL_INTERVAL_MS}ms`, delay: '300ms', overlap: '30s', initial_lookback: '5m', max_window: '1h', stale_after: '30s' },
      },
    });
    const replicas = ['r1', 'r2', 'r3'];
    for (const r of replicas) await scenario.start(r);
    const status = async (r: string) => statusSchema.parse(await (await fetch(`${scenario.replica(r).url}/api/v1/status`)).json());

    // Spread 34 / 33 / 33 once the leases have settled.
    const settled = await eventually(async () => {
      const v = await status('r1');
      const counts = replicas.map((r) => Object.values(v.ha.sources).filter((h) => h === r).length);
      return Math.min(...counts) === Math.floor(SOURCES / 3) && Math.max(...counts) === Math.ceil(SOURCES / 3) && v.ha.leader ? v : undefined;
    }, 90_000);

    const burst = (phase: string): void => {
      const t = Date.now();
      names.forEach((name, i) => {
        scenario.inject(
          name,
          Array.from({ length: THRESHOLD }, (_, k) => failure(t - 2_000 + k * 100, { INSTANCE: 'PROD01', USUARIO: `${phase}${i}`, NOMEARQUIVO: `/in/${phase}_${i}_${k}.RET` })),
        );
      });
    };
    const firingKeys = (): string[] => webhookKeys(scenario.hook.requests).filter((k) => k.startsWith('firing:'));

    burst('A');
    await eventually(async () => (firingKeys().length >= SOURCES ? true : undefined), 60_000);

    // kill -9 of a replica that polls sources but does not lead, and a second burst everywhere at once.
    const leader = settled.ha.leader ?? '';
    const victim = replicas.find((r) => r !== leader) ?? '';
    const survivor = replicas.find((r) => r !== victim) ?? '';
    const victimSources = Object.entries(settled.ha.sources).filter(([, h]) => h === victim).map(([n]) => n);
    const killedAt = Date.now();
    await scenario.replica(victim).kill('SIGKILL');
    burst('B');
    const repolledAfter = await eventually(async () => {
      const v = await status(survivor);
      const done = victimSources.every((name) => {
        const holder = v.ha.sources[name];
        const streams = v.sources.find((src) => src.name === name)?.streams ?? [];
        return holder && holder !== victim && streams.length === 2 && streams.every((st) => st.lastSuccessfulPoll && Date.parse(st.lastSuccessfulPoll) > killedAt);
      });
      return done ? Date.now() - killedAt : undefined;
    }, 60_000);
    await eventually(async () => (firingKeys().length >= 2 * SOURCES ? true : undefined), 60_000);
    await sleep(5_000); // anything sent twice would be here by now

    const expected = ['A', 'B'].flatMap((phase) => names.map((_, i) => `firing:ManySourcesBurst{user=${phase}${i}}`));
    const result = tally(expected, firingKeys());
    recordResult({
      scenario: `HA: ${SOURCES} sources, replica kill -9`,
      faults: `3 replicas, ${Object.values(settled.ha.sources).filter((h) => h === victim).length} sources on the one killed (-9, not the leader); polled again by the others after ${(repolledAfter / 1000).toFixed(1)} s`,
      ...result,
      ...(result.details ? { note: result.details } : {}),
    });
    expect(result.details).toBe('');
    expect(result.delivered).toBe(2 * SOURCES);
    // lease_ttl + interval, and the shared status's 1 s board beat plus a poll's own time.
    expect(repolledAfter).toBeLessThan(LEASE_TTL_MS + POLL_INTERVAL_MS + 3_000);
  }, 240_000);
});
