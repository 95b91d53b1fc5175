import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startCaptureServer, type CapturedRequest } from '../helpers/capture-server.js';
import { CLI, eventually, runCli } from '../helpers/daemon-process.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';
import { Scenario, failure, sleep } from './helpers/e2e-daemon.js';

/**
 * The history (contract section 12) through the built `transfer-watch run`, on SQLite and on a real PostgreSQL:
 * alerts fire, one is silenced, the receiver fails twice before it takes the notification, the daemon is killed
 * with -9 after delivery and restarted, the alerts resolve. What the history says is compared with what the
 * capture server received, one for one, and with what happened to the alerts; the CLI reads the same.
 * On PostgreSQL the database also goes down while an alert fires: alerting goes on, and its history arrives
 * once the database is back, once.
 */

if (!existsSync(CLI) && process.env['CI'] === 'true') throw new Error(`${CLI} not built (npm test runs "npm run build" first)`);

const labels = z.record(z.string(), z.string());
const eventsSchema = z.object({
  events: z.array(z.object({ at: z.string(), event: z.string(), fingerprint: z.string(), labels, annotations: labels, silence_id: z.string().nullable(), inhibited_by: z.string().nullable() })),
  next: z.string().nullable(),
});
const attemptsSchema = z.object({
  attempts: z.array(
    z.object({
      at: z.string(),
      receiver: z.string(),
      integration: z.string(),
      status: z.enum(['firing', 'resolved']),
      fingerprints: z.array(z.string()),
      title: z.string(),
      outcome: z.enum(['sent', 'failed', 'retrying', 'gave_up']),
      attempt: z.number(),
      error: z.string().nullable(),
      duration_ms: z.number(),
    }),
  ),
  next: z.string().nullable(),
});
const silenceEventsSchema = z.object({ events: z.array(z.object({ event: z.string(), silence_id: z.string(), created_by: z.string(), comment: z.string() }).passthrough()), next: z.string().nullable() });

const HOSTILE = '=HYPERLINK("http://evil.example")<script>x</script><!channel>';

function burst(user: string, t: number, n = 3) {
  return Array.from({ length: n }, (_, i) => failure(t - 1500 + i * 100, { INSTANCE: 'PROD01', USUARIO: user, NOMEARQUIVO: `F${i}.RET` }));
}

describe.skipIf(!existsSync(CLI)).each(BACKENDS)('history through the built daemon on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('records transitions, the silence and every attempt once across a kill -9, as the receiver saw them', async () => {
    // All requests, whatever the answer: the first two firing attempts get 500.
    const received: Array<{ req: CapturedRequest; status: number }> = [];
    const hook = await startCaptureServer((req, i) => {
      const status = i < 2 ? 500 : 200;
      received.push({ req, status });
      return { status, body: status === 200 ? 'ok' : 'down' };
    });
    const s = await Scenario.create(`history-${kind}`);
    const { history, postgres } = await backend.config();
    try {
      s.write({
        rules: [{ name: 'TransferErrorBurst', type: 'error_burst', group_by: ['user'], threshold: 3, window: '20s', severity: 'critical' }],
        receivers: [{ name: 'oncall', webhook: { url: `${hook.url}/hook`, send_resolved: true } }],
        route: { receiver: 'oncall', group_by: ['alertname', 'user'], group_wait: '300ms', group_interval: '1s', repeat_interval: '1h' },
        extra: { history, display_timezone: 'America/Sao_Paulo' },
      });
      await s.start();
      const status = z.object({ history: z.string(), historyStore: z.object({ where: z.string().optional() }).passthrough() }).parse(JSON.parse(await s.statusText()));
      expect(status.history).toBe(kind);
      if (kind === 'postgres') expect(status.historyStore.where).not.toContain('tw@');

      const silence = await fetch(`${s.url}/api/v1/silences`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ matchers: ['user="BANK2"'], endsAt: new Date(Date.now() + 3_600_000).toISOString(), createdBy: 'ana', comment: 'bank maintenance' }),
      });
      expect(silence.status).toBe(200);
      const silenceId = z.object({ silenceID: z.string() }).parse(await silence.json()).silenceID;

      const t = Date.now();
      s.inject([...burst(HOSTILE, t), ...burst('BANK2', t)]);
      await eventually(() => received.some((r) => r.status === 200), 30_000);
      await s.daemon!.waitForLog((l) => l['msg'] === 'notification sent' && l['status'] === 'firing');
      // The first delivered firing notification was timed once.
      await eventually(async () => (await s.metric('transfer_watch_alert_time_to_notify_seconds_count')) === 1, 10_000);

      await s.daemon!.kill('SIGKILL');
      await s.start();

      // The burst leaves its window: the resolution is told (and recorded).
      await eventually(() => received.some((r) => r.status === 200 && r.req.body.includes('"status":"resolved"')), 60_000);
      await s.daemon!.waitForLog((l) => l['msg'] === 'notification sent' && l['status'] === 'resolved', 20_000);

      if (postgres) {
        // The database goes down while a new alert fires: alerting goes on, the history waits and then arrives.
        await postgres.kill();
        s.inject(burst('BANK3', Date.now()));
        await eventually(async () => (await s.alerts()).some((a) => a.labels['user'] === 'BANK3' && a.state === 'firing'), 30_000);
        await eventually(async () => (await s.metric('transfer_watch_history_up')) === 0, 30_000);
        const down = await fetch(`${s.url}/api/v1/history/alerts`);
        expect(down.status).toBe(503);
        expect(await (await fetch(`${s.url}/`)).text()).toContain('The history database (postgres) does not answer');
        // Stopped meanwhile: the last line says how many records the database did not take (the journal keeps them).
        const stopping = s.daemon!;
        expect(await stopping.kill('SIGTERM')).toBe(0);
        const last = stopping.logs.filter((l) => String(l['msg']).startsWith('stopped')).at(-1);
        expect(last?.['msg']).toBe('stopped with history records the database did not take: they are kept in the state store and written at the next start');
        expect(Number(last?.['history_records_unwritten'])).toBeGreaterThan(0);
        await postgres.restart();
        await s.start();
        await eventually(async () => (await s.metric('transfer_watch_history_up')) === 1, 30_000);
      }

      const alertEvents = async (filter: string) =>
        eventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/alerts?filter=${encodeURIComponent(filter)}&limit=1000`)).json()).events;
      // Newest first; each transition once, though the daemon was killed and restarted.
      const hostile = await eventually(async () => {
        const events = await alertEvents(`user=${JSON.stringify(HOSTILE)}`);
        return events.some((e) => e.event === 'resolved') ? events : undefined;
      }, 30_000);
      expect(hostile.map((e) => e.event)).toEqual(['resolved', 'firing']);
      expect(hostile[0]?.labels).toMatchObject({ alertname: 'TransferErrorBurst', user: HOSTILE, severity: 'critical' });
      const bank2 = await alertEvents('user="BANK2"');
      expect(bank2.map((e) => e.event).reverse()).toEqual(['firing', 'silenced', 'resolved']);
      expect(bank2.find((e) => e.event === 'silenced')?.silence_id).toBe(silenceId);
      if (postgres) {
        const bank3 = await eventually(async () => {
          const events = await alertEvents('user="BANK3"');
          return events.length > 0 ? events : undefined;
        }, 30_000);
        expect(bank3.map((e) => e.event)).toEqual(['firing']);
      }

      // Notifications: one record per request the receiver got, in order, with its outcome.
      await sleep(1_500);
      const attempts = attemptsSchema.parse(await (await fetch(`${s.url}/api/v1/history/notifications?filter=${encodeURIComponent('receiver="oncall"')}&limit=1000`)).json()).attempts.reverse();
      const hostileFp = hostile[0]!.fingerprint;
      const ofHostile = attempts.filter((a) => a.fingerprints.includes(hostileFp));
      const receivedOfHostile = received.filter((r) => r.req.body.includes(hostileFp));
      expect(ofHostile.map((a) => [a.status, a.outcome, a.attempt])).toEqual([
        ['firing', 'retrying', 1],
        ['firing', 'retrying', 2],
        ['firing', 'sent', 3],
        ['resolved', 'sent', 1],
      ]);
      expect(receivedOfHostile.map((r) => [JSON.parse(r.req.body).status, r.status])).toEqual([
        ['firing', 500],
        ['firing', 500],
        ['firing', 200],
        ['resolved', 200],
      ]);
      expect(ofHostile[0]?.error).toContain('500');
      expect(ofHostile[2]?.title).toContain('[FIRING:1] TransferErrorBurst');
      // The silenced alert was never notified.
      expect(attempts.some((a) => a.fingerprints.includes(bank2[0]!.fingerprint))).toBe(false);
      // Every request the receiver got is recorded once: nothing lost, nothing twice.
      expect(attempts.filter((a) => a.outcome !== 'gave_up')).toHaveLength(received.length);

      // One alert's timeline: its transitions and its attempts, by fingerprint.
      const timeline = eventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/alerts?fingerprint=${hostileFp}`)).json());
      expect(timeline.events).toHaveLength(2);
      const theirs = attemptsSchema.parse(await (await fetch(`${s.url}/api/v1/history/notifications?fingerprint=${hostileFp}`)).json());
      expect(theirs.attempts).toHaveLength(4);

      // Silence events, with who and why.
      const silences = silenceEventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/silences`)).json()).events;
      expect(silences.map((e) => [e.event, e.silence_id, e.created_by, e.comment])).toEqual([['created', silenceId, 'ana', 'bank maintenance']]);

      // Paging: two at a time, to the end, the same records.
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = eventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/alerts?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json());
        paged.push(...page.events.map((e) => `${e.fingerprint}:${e.event}:${e.at}`));
        cursor = page.next;
      } while (cursor);
      const whole = eventsSchema.parse(await (await fetch(`${s.url}/api/v1/history/alerts?limit=1000`)).json()).events.map((e) => `${e.fingerprint}:${e.event}:${e.at}`);
      expect(paged).toEqual(whole);

      // Hostile input: 400 naming the parameter.
      const unknown = await fetch(`${s.url}/api/v1/history/alerts?user=BANK1`);
      expect(unknown.status).toBe(400);
      expect(await unknown.text()).toContain('unknown parameter \\"user\\"');
      const badMatcher = await fetch(`${s.url}/api/v1/history/alerts?filter=${encodeURIComponent('user=~"("')}`);
      expect(badMatcher.status).toBe(400);
      expect(await badMatcher.text()).toContain('filter #1');
      expect((await fetch(`${s.url}/api/v1/history/notifications?limit=100000`)).status).toBe(400);
      expect((await fetch(`${s.url}/api/v1/history/notifications?from=yesterday`)).status).toBe(400);
      expect((await fetch(`${s.url}/api/v1/history/notifications?cursor=abc$`)).status).toBe(400);

      // CSV: the spreadsheet formula in a label is inert.
      const csv = await (await fetch(`${s.url}/api/v1/history/alerts?format=csv&filter=${encodeURIComponent(`user=${JSON.stringify(HOSTILE)}`)}`)).text();
      expect(csv.split('\r\n')[0]).toBe('at,event,alertname,fingerprint,labels,summary,silence_id,inhibited_by');
      expect(csv).not.toMatch(/(^|,)=HYPERLINK/m);

      // The CLI reads the same history (table and CSV).
      const table = await runCli(['history', 'notifications', '--url', s.url, '--filter', 'receiver="oncall"', '--since', '1h']);
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n').filter((l) => / oncall +webhook /.test(l))).toHaveLength(attempts.length);
      // In the zone the daemon's pages use (display_timezone), named in the header, each time with its offset.
      expect(table.stdout.split('\n')[0]).toMatch(/^AT \(America\/Sao_Paulo\) +RECEIVER/);
      expect(table.stdout.split('\n')[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d -03:00 /);
      const utcTable = await runCli(['history', 'notifications', '--url', s.url, '--since', '1h', '--timezone', 'UTC']);
      expect(utcTable.stdout.split('\n')[0]).toMatch(/^AT \(UTC\) +RECEIVER/);
      const cliCsv = await runCli(['history', 'alerts', '--url', s.url, '--format', 'csv', '--filter', 'user="BANK2"', '--since', '1h']);
      expect(cliCsv.code).toBe(0);
      expect(cliCsv.stdout.trim().split('\r\n')).toHaveLength(1 + bank2.length);
      // The page: one alert's timeline (transitions and attempts), and the search of past alerts; hostile labels inert.
      const page = await (await fetch(`${s.url}/history?fingerprint=${hostileFp}`)).text();
      expect(page).not.toContain('<script>x');
      expect(page).toContain('&lt;script&gt;x&lt;/script&gt;&lt;!channel&gt;');
      expect(page.match(/notification <span class="badge/g)).toHaveLength(4);
      expect(page).toContain('retrying');
      const search = await (await fetch(`${s.url}/history?filter=${encodeURIComponent('user="BANK2"')}&since=1h`)).text();
      // The silence named with who made it and why, and the silences' own events listed.
      expect(search).toContain(`silenced <span class="muted">by silence ${silenceId} — by ana: “bank maintenance”</span>`);
      expect(search).toMatch(/<section id="silences"[\s\S]*<td data-label="Event">created<\/td>[\s\S]*ana: “bank maintenance”/);
      expect(search).toContain(`/history?fingerprint=${bank2[0]!.fingerprint}`);
      const badSearch = await fetch(`${s.url}/history?filter=${encodeURIComponent('user=~"("')}`);
      expect(badSearch.status).toBe(400);
      const cliBad = await runCli(['history', 'alerts', '--url', s.url, '--filter', 'user=~"("']);
      expect(cliBad.code).toBe(1);
      expect(cliBad.stderr).toContain('filter #1');
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 180_000);

  it('a kill -9 while a request is in flight: that request and the one sent again after the restart are both recorded', async () => {
    const received: Array<{ req: CapturedRequest; at: number }> = [];
    // The first request is held (its answer would come after the kill); later ones are answered at once.
    const hook = await startCaptureServer((req) => {
      received.push({ req, at: Date.now() });
      return { status: 200, body: 'ok' };
    });
    const held = await startHeldServer(hook.url);
    const s = await Scenario.create(`history-inflight-${kind}`);
    const { history } = await backend.config();
    try {
      s.write({
        rules: [{ name: 'TransferErrorBurst', type: 'error_burst', group_by: ['user'], threshold: 3, window: '1h', severity: 'critical' }],
        receivers: [{ name: 'oncall', webhook: { url: `${held.url}/hook`, send_resolved: true } }],
        route: { receiver: 'oncall', group_by: ['alertname', 'user'], group_wait: '300ms', group_interval: '1s', repeat_interval: '1h' },
        extra: { history },
      });
      await s.start();
      s.inject(burst('BANK9', Date.now()));
      await eventually(() => held.inFlight > 0, 30_000);
      await s.daemon!.kill('SIGKILL');
      await s.start();
      await eventually(() => received.length >= 1, 30_000);
      await sleep(1_500);
      const attempts = await eventually(async () => {
        const page = attemptsSchema.parse(await (await fetch(`${s.url}/api/v1/history/notifications`)).json()).attempts;
        return page.length >= 2 ? page.reverse() : undefined;
      }, 20_000);
      // The request sent again after the restart is the second attempt, not a second "attempt 1".
      expect(attempts.map((a) => [a.outcome, a.attempt])).toEqual([
        ['failed', 1],
        ['sent', 2],
      ]);
      expect(attempts[0]?.error).toMatch(/^interrupted: the daemon stopped while this request was in flight/);
      // Both requests reached the receiver (the held one too), with one Idempotency-Key: the repeat can be dropped.
      expect(held.seen).toHaveLength(2);
      expect(new Set(held.seen.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    } finally {
      await s.cleanup();
      await held.close();
      await hook.close();
    }
  }, 120_000);
});

/**
 * A receiver in front of `target` that holds the first request without answering (a daemon killed then never
 * learns its outcome) and passes the others on.
 */
async function startHeldServer(target: string): Promise<{ url: string; inFlight: number; seen: Array<{ headers: Record<string, string | string[] | undefined> }>; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const state = { inFlight: 0, seen: [] as Array<{ headers: Record<string, string | string[] | undefined> }> };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.seen.push({ headers: req.headers });
      if (state.seen.length === 1) {
        state.inFlight++;
        return; // never answered: the daemon is killed meanwhile
      }
      void fetch(`${target}${req.url ?? '/'}`, { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': 'application/json' } }).then(
        (r) => {
          res.writeHead(r.status);
          res.end();
        },
        () => {
          res.writeHead(502);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get inFlight() {
      return state.inFlight;
    },
    seen: state.seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
