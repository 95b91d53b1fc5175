import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { HAVE_REDIS, REDIS_SERVER } from '../helpers/redis-server.js';
import { failure, sleep } from './helpers/e2e-daemon.js';
import { HaScenario, LEASE_TTL_MS, POLL_INTERVAL_MS } from './helpers/ha-scenario.js';

/**
 * High availability through the built binary (issue 17): three real `transfer-watch run` replicas on Debian's
 * redis-server, one simulator per source over HTTP, a webhook capture server. kill -9 and SIGSTOP of the
 * replica that matters, a rule grouping by user across two sources polled by different replicas, and a
 * silence added on one replica and seen on another.
 */

if (!HAVE_REDIS) {
  if (process.env['CI'] === 'true') throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);
  console.warn(`skipping the HA e2e tests: ${REDIS_SERVER} not found (apt-get install redis-server)`);
}

/** A burst rule that groups by user across every source: its count needs the transfers of both sources. */
const crossSourceBurst = {
  name: 'UserErrorBurst',
  type: 'error_burst',
  group_by: ['user'],
  threshold: 6,
  window: '2m',
  severity: 'critical',
  annotations: { summary: '{{count}} failed transfers for {{labels.user}} in {{window}}' },
};

function burst(t: number, user: string, n: number, tag: string) {
  return Array.from({ length: n }, (_, i) => failure(t - 5_000 + i * 100, { INSTANCE: 'PROD01', USUARIO: user, NOMEARQUIVO: `${tag}_${i}.RET` }));
}

async function countOf(s: HaScenario, replica: string, user: string): Promise<number | undefined> {
  const alert = (await s.alerts(replica)).find((a) => a.labels['user'] === user && a.state === 'firing');
  const m = /^(\d+) failed/.exec(alert?.annotations['summary'] ?? '');
  return m ? Number(m[1]) : undefined;
}

describe.skipIf(!existsSync(CLI) || !HAVE_REDIS).concurrent('high availability on Redis (issue 17)', () => {
  it('a rule across two sources polled by different replicas counts every transfer once; kill -9 of the leader while the group is due: notified exactly once, polling resumes', async () => {
    const s = await HaScenario.create(['east', 'west']);
    try {
      s.write({ rules: [crossSourceBurst] });
      for (const r of ['r1', 'r2', 'r3']) await s.start(r);
      const leader = await s.leader(['r1', 'r2', 'r3']);
      // Both sources polled, by different replicas when possible (at most ceil(2/3) = 1 each).
      const holders = await eventually(async () => {
        const v = (await s.status('r1')).sources;
        return v['east'] && v['west'] && v['east'] !== v['west'] ? v : undefined;
      }, 15_000);
      expect(Object.values(holders).every((h) => ['r1', 'r2', 'r3'].includes(h ?? ''))).toBe(true);

      // Three failures for BANK1 on each source: only together do they reach the threshold of 6.
      const t = Date.now();
      s.inject('east', burst(t, 'BANK1', 3, 'E'));
      s.inject('west', burst(t, 'BANK1', 3, 'W'));
      await eventually(async () => (await countOf(s, leader, 'BANK1')) === 6, 20_000);
      // group_wait is 2 s: the group is due now. The leader dies before it can send.
      const killedAt = Date.now();
      await s.replica(leader).kill('SIGKILL');
      const alive = ['r1', 'r2', 'r3'].filter((r) => r !== leader);
      const next = await s.leader(alive);
      const failover = Date.now() - killedAt;
      expect(failover).toBeLessThan(LEASE_TTL_MS + POLL_INTERVAL_MS + 5_000);

      await eventually(async () => s.hook.requests.length >= 1, 20_000);
      await sleep(4_000);
      const firing = s.payloads().filter((p) => p.status === 'firing');
      expect(firing).toHaveLength(1);
      expect(firing[0]?.alerts.map((a) => [a.labels['user'], a.annotations['summary']])).toEqual([['BANK1', '6 failed transfers for BANK1 in 2m']]);

      // Polling resumed on both sources (whoever holds them now): one more failure each is counted once.
      const t2 = Date.now();
      s.inject('east', burst(t2, 'BANK1', 1, 'E2'));
      s.inject('west', burst(t2, 'BANK1', 1, 'W2'));
      await eventually(async () => (await countOf(s, next, 'BANK1')) === 8, 20_000);
      await sleep(2_000);
      expect(await countOf(s, next, 'BANK1')).toBe(8);
      // Every live replica shows the same alerts, whichever is asked.
      for (const r of alive) expect(await countOf(s, r, 'BANK1')).toBe(8);
    } finally {
      await s.cleanup();
    }
  }, 120_000);

  it('a leader paused past its lease (SIGSTOP) sends nothing and writes nothing when it wakes up (fencing)', async () => {
    const s = await HaScenario.create(['east']);
    try {
      s.write({ rules: [crossSourceBurst], route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '3s', group_interval: '2s', repeat_interval: '1h' } });
      for (const r of ['r1', 'r2']) await s.start(r);
      const leader = await s.leader(['r1', 'r2']);
      const other = leader === 'r1' ? 'r2' : 'r1';
      s.inject('east', burst(Date.now(), 'BANK2', 6, 'S'));
      await eventually(async () => (await countOf(s, leader, 'BANK2')) === 6, 20_000);
      const paused = s.replica(leader);
      process.kill(paused.proc.pid ?? 0, 'SIGSTOP');
      await s.leader([other]);
      await eventually(async () => s.hook.requests.length >= 1, 20_000);
      const before = paused.logs.length;
      process.kill(paused.proc.pid ?? 0, 'SIGCONT');
      // It wakes up with timers due (a send, commits, renewals): none of them may act.
      // The log names the role, the lease and what happened: paused past the lease (told by whichever it ran first, the
      // heartbeat that finds the lease taken or the first question that finds it expired), not a shutdown.
      const steppedDown = await paused.waitForLog((l) => l.msg === 'no longer leading: rules and notifications are left to the holder of the leader lease', 15_000);
      expect(steppedDown).toMatchObject({ role: 'leader', lease: 'leader', why: expect.stringMatching(/^(expired \d+ s ago: not renewed within lease_ttl \(this process was paused.*\)|taken over by replica r\d while this one was paused past the lease)$/) as unknown });
      // Its first words after the pause are that a lease is gone — not a refused (fenced) write.
      const woke = paused.logs.slice(before).filter((l) => l['level'] === 'warn' || l['level'] === 'error');
      expect(woke[0]).toMatchObject({ msg: 'lease no longer held' });
      await sleep(4_000);
      expect(s.payloads().filter((p) => p.status === 'firing')).toHaveLength(1);
      const after = paused.logs.slice(before);
      expect(after.filter((l) => l.msg === 'notification sent')).toEqual([]);
      // Whatever it tried to write was refused by the fence (never applied).
      expect(after.some((l) => l.msg === 'lease no longer held' && l['lease'] === 'source:east')).toBe(true);
      expect(after.filter((l) => /shutdown|shutting down/.test(JSON.stringify(l)))).toEqual([]);
      expect((await s.status(other)).leading).toBe(true);
    } finally {
      await s.cleanup();
    }
  }, 90_000);

  it("the outbox of a dead leader is taken over: a notification it could not deliver is delivered once by the next", async () => {
    const s = await HaScenario.create(['east']);
    try {
      s.write({ rules: [crossSourceBurst] });
      for (const r of ['r1', 'r2']) await s.start(r);
      const leader = await s.leader(['r1', 'r2']);
      s.receiverDown = true;
      s.inject('east', burst(Date.now(), 'BANK7', 6, 'O'));
      // Queued and failing: the leader retries from its outbox (in Redis).
      await s.replica(leader).waitForLog((l) => l.msg === 'notification failed; will retry', 20_000);
      await s.replica(leader).kill('SIGKILL');
      s.receiverDown = false;
      await s.leader([leader === 'r1' ? 'r2' : 'r1']);
      await eventually(async () => s.hook.requests.length >= 1, 30_000);
      await sleep(4_000);
      expect(s.payloads().map((p) => `${p.status}:${p.alerts.map((a) => a.labels['user']).join(',')}`)).toEqual(['firing:BANK7']);
    } finally {
      await s.cleanup();
    }
  }, 90_000);

  it('a silence added on one replica applies on another within a second, and nothing is sent for it', async () => {
    const s = await HaScenario.create(['east']);
    try {
      s.write({ rules: [crossSourceBurst], route: { receiver: 'hook', group_by: ['alertname', 'user'], group_wait: '4s', group_interval: '2s', repeat_interval: '1h' } });
      for (const r of ['a', 'b', 'c']) await s.start(r);
      await s.leader(['a', 'b', 'c']);
      expect(await s.silenceUser('a', 'BANK3', 'maintenance')).toBe(200);
      const created = Date.now();
      await eventually(async () => ((await (await fetch(`${s.replica('c').url}/api/v2/silences`)).json()) as unknown[]).length === 1, 5_000, 50);
      expect(Date.now() - created).toBeLessThan(1_500);
      s.inject('east', burst(Date.now(), 'BANK3', 6, 'Q'));
      await eventually(async () => (await s.alerts('c')).some((a) => a.labels['user'] === 'BANK3' && a.silenced), 20_000);
      await sleep(6_000);
      expect(s.hook.requests).toHaveLength(0);
    } finally {
      await s.cleanup();
    }
  }, 90_000);
});

const shortBurst = { ...crossSourceBurst, name: 'ShortBurst', window: '15s' };

describe.skipIf(!existsSync(CLI) || !HAVE_REDIS).concurrent('high availability through restarts and a Redis outage (issue 17)', () => {
  it('a rolling restart of all three replicas loses nothing and repeats nothing', async () => {
    const s = await HaScenario.create(['east', 'west']);
    try {
      s.write({ rules: [shortBurst] });
      for (const r of ['r1', 'r2', 'r3']) await s.start(r);
      await s.leader(['r1', 'r2', 'r3']);
      s.inject('east', burst(Date.now(), 'BANK4', 6, 'R'));
      await eventually(async () => s.payloads().some((p) => p.status === 'firing'), 20_000);
      for (const r of ['r1', 'r2', 'r3']) {
        expect(await s.replica(r).kill('SIGTERM')).toBe(0);
        await s.start(r);
        await s.leader(['r1', 'r2', 'r3']);
      }
      // The 15 s window ends: exactly one RESOLVED, and the FIRING was never repeated.
      await eventually(async () => s.payloads().some((p) => p.status === 'resolved'), 40_000);
      await sleep(3_000);
      expect(s.payloads().map((p) => `${p.status}:${p.alerts.map((a) => a.labels['user']).join(',')}`)).toEqual(['firing:BANK4', 'resolved:BANK4']);
    } finally {
      await s.cleanup();
    }
  }, 150_000);

  it('Redis down for 30 s then back empty: the coordination alert fires and resolves, no alert is lost, at most one repeat per group', async () => {
    const s = await HaScenario.create(['east']);
    try {
      s.write({ rules: [crossSourceBurst] });
      for (const r of ['r1', 'r2']) await s.start(r);
      await s.leader(['r1', 'r2']);
      s.inject('east', burst(Date.now(), 'BANK5', 6, 'A'));
      await eventually(async () => s.payloads().some((p) => p.alerts.some((a) => a.labels['user'] === 'BANK5')), 20_000);

      await s.redis.kill();
      const killedAt = Date.now();
      // Every replica that cannot reach Redis for lease_ttl says so: metric and built-in alert.
      for (const r of ['r1', 'r2']) {
        await eventually(async () => (await s.alerts(r)).some((a) => a.labels['alertname'] === 'TransferWatchCoordinationDown' && a.labels['replica'] === r), 20_000);
        expect(await (await fetch(`${s.replica(r).url}/metrics`)).text()).toMatch(/^transfer_watch_ha_redis_up 0$/m);
      }
      // Polled while Redis is away: kept, and counted once it is back.
      s.inject('east', burst(Date.now(), 'BANK6', 6, 'B'));
      // Away for 30 s, as a Redis failover or a restarted node would keep it.
      await sleep(Math.max(3_000, 30_000 - (Date.now() - killedAt)));
      await s.redis.restart();

      await eventually(async () => s.payloads().some((p) => p.alerts.some((a) => a.labels['user'] === 'BANK6' && a.status === 'firing')), 30_000);
      await eventually(
        async () => s.payloads().some((p) => p.status === 'resolved' && p.alerts.some((a) => a.labels['alertname'] === 'TransferWatchCoordinationDown')),
        30_000,
      );
      for (const r of ['r1', 'r2']) {
        await eventually(async () => !(await s.alerts(r)).some((a) => a.labels['alertname'] === 'TransferWatchCoordinationDown'), 20_000);
        // Redis restarted empty is named as that, before anything that claims another replica holds a lease.
        const logs = s.logs(r);
        const reset = logs.findIndex((l) => typeof l.msg === 'string' && l.msg.startsWith('Redis restarted empty'));
        expect(reset).toBeGreaterThanOrEqual(0);
        expect(logs.some((l) => l.msg === 'the shared state store restarted empty (Redis lost its data): wrote back what this replica holds')).toBe(true);
        const claims = logs.findIndex((l) => /replica \S+ holds the|taken over by replica/.test(JSON.stringify(l)));
        if (claims >= 0) expect(claims).toBeGreaterThan(reset);
      }
      await sleep(3_000);
      const firingBy = new Map<string, number>();
      for (const p of s.payloads()) for (const a of p.alerts) if (a.status === 'firing') firingBy.set(p.groupKey, (firingBy.get(p.groupKey) ?? 0) + 1);
      for (const [group, n] of firingBy) expect(n, group).toBeLessThanOrEqual(2);
    } finally {
      await s.cleanup();
    }
  }, 150_000);
});
