import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/daemon-process.js';
import { startDaemonProcess } from './harness.js';
import {
  HEALTH_P99_BOUND_MS,
  PARTNER,
  RSS_BOUND_MB,
  legitDelivered,
  reportHostile,
  startHostileSetup,
  timedGet,
  underAttack,
  type HostileSetup,
} from './hostile-harness.js';

/**
 * Hostile clients (issue 23): each scenario attacks the real daemon while a prober measures `/healthz` and a
 * sampler its RSS; the legitimate burst must still be notified exactly once. The attacks are the rows of the
 * issue's table that come from the daemon's own HTTP side.
 */

const ATTACK_MS = 8_000;

describe('reliability: hostile clients', () => {
  const setups: HostileSetup[] = [];
  afterEach(async () => {
    for (const s of setups.splice(0)) await s.cleanup();
  });

  it('ReDoS from an open read: 8 clients asking /api/v2/alerts?filter=user=~"PARTNER_ABCDEFGHIJ(.*.*)*!" in a loop', async () => {
    const s = await startHostileSetup('redos-read');
    setups.push(s);
    const t = await legitDelivered(s);
    const filter = encodeURIComponent('user=~"PARTNER_ABCDEFGHIJ(.*.*)*!"');
    let answered = 0;
    const r = await underAttack(s.daemon, ATTACK_MS, async (signal) => {
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (!signal.aborted) {
            const res = await timedGet(`${s.daemon.url}/api/v2/alerts?filter=${filter}`, 10_000);
            if (res.status === 200) answered += 1;
          }
        }),
      );
    });
    reportHostile('hostile: ReDoS filter', `${answered} hostile reads answered`, t, r);
    expect(answered).toBeGreaterThan(50);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(r.rssMb).toBeLessThan(RSS_BOUND_MB);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 90_000);

  it('persistent ReDoS: a silence user=~"(.*.*)*X" against a 44-character user; alive, SIGTERM obeyed, and again after kill -9 and restart', async () => {
    const s = await startHostileSetup('redos-silence');
    setups.push(s);
    const t = await legitDelivered(s);
    const now = Date.now();
    const created = await fetch(`${s.daemon.url}/api/v2/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        matchers: [{ name: 'user', value: '(.*.*)*X', isRegex: true, isEqual: true }],
        startsAt: new Date(now).toISOString(),
        endsAt: new Date(now + 3_600_000).toISOString(),
        createdBy: 'mallory',
        comment: 'freeze it',
      }),
    });
    expect(created.status).toBe(200);
    const before = await underAttack(s.daemon, 3_000, async () => undefined);
    // kill -9 and restart on the same state: the silence is loaded again and matched against the alert.
    await s.daemon.kill('SIGKILL');
    const again = await startDaemonProcess(s.configFile);
    s.daemon = again;
    await eventually(async () => (await timedGet(`${again.url}/readyz`)).status === 200, 20_000);
    const after = await underAttack(again, 3_000, async () => undefined);
    const silences = (await (await fetch(`${again.url}/api/v2/silences`)).json()) as Array<{ matchers: Array<{ value: string }> }>;
    expect(silences.some((x) => x.matchers[0]?.value === '(.*.*)*X')).toBe(true);
    const alerts = (await (await fetch(`${again.url}/api/v1/alerts`)).json()) as { alerts: Array<{ labels: Record<string, string> }> };
    expect(alerts.alerts.some((a) => a.labels['user'] === PARTNER)).toBe(true);
    const started = Date.now();
    const code = await again.kill('SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    const r = { health: { p99: Math.max(before.health.p99, after.health.p99) }, rssMb: Math.max(before.rssMb, after.rssMb) };
    reportHostile('hostile: ReDoS silence', 'silence (.*.*)*X, kill -9, restart, SIGTERM', t, r);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 90_000);

  it('256 connections that send nothing, reconnecting as soon as they are closed: health answered throughout, each closed after the 15 s headers timeout', async () => {
    const s = await startHostileSetup('idle-sockets');
    setups.push(s);
    const t = await legitDelivered(s);
    const port = Number(new URL(s.daemon.url).port);
    let opened = 0;
    const lifetimes: number[] = [];
    const sockets = new Set<Socket>();
    const r = await underAttack(s.daemon, 22_000, async (signal) => {
      const hold = (): void => {
        if (signal.aborted) return;
        const sock = connect(port, '127.0.0.1');
        const born = Date.now();
        opened += 1;
        sockets.add(sock);
        sock.on('error', () => undefined);
        sock.on('close', () => {
          sockets.delete(sock);
          if (!signal.aborted) lifetimes.push(Date.now() - born);
          setTimeout(hold, 5);
        });
      };
      for (let i = 0; i < 256; i++) hold();
      await new Promise((res) => signal.addEventListener('abort', res));
      for (const sock of sockets) sock.destroy();
    });
    const longest = Math.max(...lifetimes);
    reportHostile('hostile: idle sockets', `${opened} silent connections, longest-lived ${Math.round(longest / 1000)} s`, t, r);
    // The first 256 were closed by the headers timeout and came back (the documented 15 s, checked every second).
    expect(opened).toBeGreaterThanOrEqual(512);
    expect(longest).toBeLessThan(18_000);
    expect(r.health.failed).toBe(0);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 90_000);

  it('100 keep-alive connections guessing basic-auth passwords (bcrypt cost 10): health answered, polling goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-rel-webcfg-'));
    const webConfig = join(dir, 'web.yml');
    writeFileSync(webConfig, `basic_auth_users:\n  alice: ${bcrypt.hashSync('the-right-one', 10)}\n`);
    const s = await startHostileSetup('guessing', { webConfigFile: webConfig });
    setups.push(s);
    const t = await legitDelivered(s);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });
    let refused = 0;
    const requestsBefore = s.sim.stats().reportRequests;
    const r = await underAttack(s.daemon, ATTACK_MS, async (signal) => {
      await Promise.all(
        Array.from({ length: 100 }, async (_, w) => {
          for (let i = 0; !signal.aborted; i++) {
            await new Promise<void>((resolve) => {
              const req = http.get(`${s.daemon.url}/api/v1/alerts`, { agent, headers: { authorization: `Basic ${Buffer.from(`alice:guess-${w}-${i}`).toString('base64')}` } }, (res) => {
                if (res.statusCode === 401 || res.statusCode === 429) refused += 1;
                res.resume();
                res.on('end', resolve);
              });
              req.on('error', () => resolve());
            });
          }
        }),
      );
      agent.destroy();
    });
    const polls = s.sim.stats().reportRequests - requestsBefore;
    reportHostile('hostile: password guessing', `${refused} guesses refused, ${polls} report requests meanwhile`, t, r);
    expect(refused).toBeGreaterThan(100);
    // Two streams polled every second for the attack's 8 s: polling must not have stalled (was halved).
    expect(polls).toBeGreaterThanOrEqual(10);
    expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    // The right password still gets in once the guessing stops (after the guessing peer's wait).
    const ok = await fetch(`${s.daemon.url}/api/v1/alerts`, { headers: { authorization: `Basic ${Buffer.from('alice:the-right-one').toString('base64')}` } });
    expect(ok.status).toBe(200);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 90_000);
});
