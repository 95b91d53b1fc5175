import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';
import { CLI, eventually } from '../helpers/daemon-process.js';
import { startCaptureServer } from '../helpers/capture-server.js';
import { Scenario, dailyCronAt, secondAfter, sleep, success, until } from './helpers/e2e-daemon.js';
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

const occurrencesSchema = z.object({
  occurrences: z.array(z.object({ key: z.record(z.string(), z.string()), deadline: z.string(), outcome: z.string(), final: z.boolean(), files: z.array(z.object({ file: z.string() })) })),
});

describe.skipIf(!existsSync(CLI)).concurrent.each(BACKENDS)('restarts around a deadline on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('judges a deadline whose window was open at two restarts, and turns its open occurrences late across more', async () => {
    const hook = await startCaptureServer();
    const s = await Scenario.create(`restart-deadline-${kind}`);
    const { history } = await backend.config();
    try {
      const deadline = secondAfter(30_000);
      s.write({
        rules: [
          {
            name: 'FeedMissing',
            type: 'missing_file',
            match: { file: ['FEED_*.CSV'] },
            for_each: { label: 'user', values: ['ONTIME', 'LATE', 'MISSING', 'OPEN'] },
            deadline: dailyCronAt(deadline),
            timezone: 'UTC',
            window: '2m',
            severity: 'critical',
            sla: { late_until: '1h' },
          },
        ],
        receivers: [{ name: 'hook', webhook: { url: `${hook.url}/hook` } }],
        route: { ...ROUTE, group_by: ['alertname', 'user'] },
        extra: { history },
      });
      await s.start();
      s.inject([success(Date.now() - 60_000, { USUARIO: 'ONTIME', NOMEARQUIVO: 'FEED_ONTIME.CSV' })]);
      // Two restarts inside the window, before the deadline: a SIGTERM, then a kill -9.
      await s.waitPolledPast(Date.now());
      await s.daemon!.kill('SIGTERM');
      await s.start();
      await s.waitPolledPast(Date.now());
      await s.daemon!.kill('SIGKILL');
      await s.start();
      expect(Date.now(), 'the restarts took too long for the planned deadline').toBeLessThan(deadline - 2_000);

      const occurrences = async () =>
        occurrencesSchema
          .parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${new Date(deadline - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(deadline + 86_400_000).toISOString().slice(0, 10)}`)).json())
          .occurrences.filter((o) => Date.parse(o.deadline) === deadline)
          .map((o) => [o.key['user'], o.outcome, o.final])
          .sort();
      const firingUsers = async () => (await s.alerts()).filter((a) => a.state === 'firing').map((a) => a.labels['user']).sort();
      await eventually(async () => (await firingUsers()).length === 3, 30_000);
      expect(await firingUsers()).toEqual(['LATE', 'MISSING', 'OPEN']);
      await eventually(async () => (await occurrences()).length === 4, 20_000);
      expect(await occurrences()).toEqual([
        ['LATE', 'missing', false],
        ['MISSING', 'missing', false],
        ['ONTIME', 'on_time', true],
        ['OPEN', 'missing', false],
      ]);

      // A SIGTERM after the deadline; LATE's file comes: late, resolved, saying so.
      await s.daemon!.kill('SIGTERM');
      await s.start();
      s.inject([success(Date.now(), { USUARIO: 'LATE', NOMEARQUIVO: 'FEED_LATE.CSV' })]);
      await eventually(async () => (await occurrences()).find((o) => o[0] === 'LATE')?.[1] === 'late', 20_000);
      // A kill -9; OPEN's file comes: late too.
      await s.daemon!.kill('SIGKILL');
      await s.start();
      s.inject([success(Date.now(), { USUARIO: 'OPEN', NOMEARQUIVO: 'FEED_OPEN.CSV' })]);
      await eventually(async () => (await occurrences()).find((o) => o[0] === 'OPEN')?.[1] === 'late', 20_000);
      await eventually(async () => (await firingUsers()).length === 1, 20_000);
      expect(await firingUsers()).toEqual(['MISSING']);
      await sleep(3_000);
      // The receivers heard each missing file once, and a resolved message only for the two that came, late.
      const sent = hook.requests.map((r) => webhookPayloadSchema.parse(JSON.parse(r.body))).flatMap((p) => p.alerts.map((a) => [a.labels['user'], a.status, a.annotations['resolution'] ?? '']));
      expect(sent.map(([user, status]) => `${user} ${status}`).sort()).toEqual(['LATE firing', 'LATE resolved', 'MISSING firing', 'OPEN firing', 'OPEN resolved']);
      expect(sent.filter(([, status]) => status === 'resolved').every(([, , resolution]) => resolution?.startsWith('arrived late at '))).toBe(true);
      expect(await occurrences()).toEqual([
        ['LATE', 'late', true],
        ['MISSING', 'missing', false],
        ['ONTIME', 'on_time', true],
        ['OPEN', 'late', true],
      ]);
    } finally {
      await s.cleanup();
      await hook.close();
    }
  }, 180_000);
});

describe.skipIf(!existsSync(CLI)).concurrent.each(BACKENDS)('the seam of a stop on %s', (kind) => {
  const backend = new HistoryBackend(kind);
  afterAll(() => backend.close());

  it('judges every deadline that came while nothing ran, once, from the service history, and counts none of them as live', async () => {
    const s = await Scenario.create(`restart-seam-${kind}`);
    const { history } = await backend.config();
    const EVERY = 10_000;
    try {
      s.write({
        rules: [
          {
            name: 'Every10s',
            type: 'missing_file',
            match: { file: ['F_*.CSV'] },
            for_each: { label: 'user', values: ['A', 'B'] },
            deadline: '*/10 * * * * *',
            timezone: 'UTC',
            window: '5s',
          },
        ],
        receivers: [{ name: 'null', console: {} }],
        route: { receiver: 'null', group_by: ['alertname'], group_wait: '1s', group_interval: '5s', repeat_interval: '1h' },
        extra: { history },
      });
      // A sends each file 3 s before its deadline, for the whole test; B sends one, late, for a deadline of the stop.
      const first = Math.ceil((Date.now() + 5_000) / EVERY) * EVERY;
      const deadlines = Array.from({ length: 16 }, (_, i) => first + i * EVERY);
      s.inject(deadlines.map((d) => success(d - 3_000, { USUARIO: 'A', NOMEARQUIVO: `F_A_${d}.CSV` })));
      await s.start();
      await until(first + 2 * EVERY + 3_000);
      await s.daemon!.kill('SIGTERM');
      const stoppedAt = Date.now();
      // Nothing runs across three or four deadlines; B's file of the second of them comes 2 s late (before the next window opens), meanwhile.
      const lateFor = Math.ceil(stoppedAt / EVERY) * EVERY + EVERY;
      s.inject([success(lateFor + 2_000, { USUARIO: 'B', NOMEARQUIVO: 'F_B_LATE.CSV' })]);
      await sleep(45_000);
      const restartedAt = Date.now();
      await s.start();
      // The first deadline after the new process leads (ready): it is decided live, and counted.
      const last = Math.ceil((Date.now() + 1_000) / EVERY) * EVERY;
      await until(last + 4_000);
      const day = (t: number) => new Date(t).toISOString().slice(0, 10);
      const listed = await eventually(async () => {
        const all = occurrencesSchema.parse(await (await fetch(`${s.url}/api/v1/sla/occurrences?from=${day(first - 86_400_000)}&to=${day(last + 86_400_000)}&limit=5000`)).json()).occurrences;
        const judged = all.filter((o) => Date.parse(o.deadline) >= first && Date.parse(o.deadline) <= last);
        return judged.length >= 2 * ((last - first) / EVERY + 1) ? judged : undefined;
      }, 30_000);
      // Every deadline from the first to the last, each once per key, whatever ran when.
      const byDeadline = new Map<number, string[]>();
      for (const o of listed) byDeadline.set(Date.parse(o.deadline), [...(byDeadline.get(Date.parse(o.deadline)) ?? []), `${o.key['user']}:${o.outcome}`]);
      const expected = new Map<number, string[]>();
      for (let d = first; d <= last; d += EVERY) expected.set(d, ['A:on_time', d === lateFor ? 'B:late' : 'B:missing']);
      expect(new Map([...byDeadline].map(([d, list]) => [d, list.sort()]))).toEqual(expected);
      const inStop = [...expected.keys()].filter((d) => d > stoppedAt && d < restartedAt);
      expect(inStop.length).toBeGreaterThanOrEqual(3);
      // The counter counts what this process decided live: never the deadlines of the stop it judged from the history.
      const counted = (await s.metric('transfer_watch_sla_occurrences_total', { rule: 'Every10s', outcome: 'on_time', user: 'A' })) ?? 0;
      const live = [...expected.keys()].filter((d) => d > restartedAt).length;
      expect(counted).toBeLessThanOrEqual(live);
      expect(counted).toBeGreaterThanOrEqual(1);
    } finally {
      await s.cleanup();
    }
  }, 240_000);
});
