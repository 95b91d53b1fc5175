import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { NotifyError } from '../../src/notify/notification.js';
import { Notifier, type NotifierOptions } from '../../src/notify/notifier.js';
import { FileStateStore } from '../../src/state/file-state-store.js';
import { MemoryStateStore, type StateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';
import { FakeIntegration, firing, notifyConfig, resolved } from './helpers.js';

const T0 = Date.parse('2024-03-05T12:00:00Z');
const S = 1000;
const M = 60 * S;

function baseConfig(extra: Record<string, unknown> = {}): Config {
  return notifyConfig({
    receivers: [{ name: 'ops', console: {} }],
    route: { receiver: 'ops', group_by: ['alertname'], group_wait: '30s', group_interval: '5m', repeat_interval: '4h' },
    ...extra,
  });
}

interface Harness {
  clock: ManualClock;
  notifier: Notifier;
  hook: FakeIntegration;
  counts: Record<string, number>;
  logs: string[];
}

function harness(clock: ManualClock, state: StateStore, opts: Partial<NotifierOptions> = {}, hook = new FakeIntegration()): Harness {
  const counts: Record<string, number> = {};
  const logs: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void logs.push(s) } });
  const notifier = new Notifier({
    config: baseConfig(),
    clock,
    logger,
    state,
    random: () => 0.5,
    integrationsFor: () => [hook],
    hooks: {
      onNotification: (r, i, outcome) => {
        counts[`${r}/${i}/${outcome}`] = (counts[`${r}/${i}/${outcome}`] ?? 0) + 1;
      },
      onGiveUp: () => {
        counts.givenUp = (counts.givenUp ?? 0) + 1;
      },
    },
    ...opts,
  });
  return { clock, notifier, hook, counts, logs };
}

const burstA = firing({ alertname: 'Burst', mft_instance: 'PROD1' }, T0);
const burstB = firing({ alertname: 'Burst', mft_instance: 'PROD2' }, T0);
const slow = firing({ alertname: 'Slow', mft_instance: 'PROD1' }, T0);

describe('Notifier grouping and dedup', () => {
  let clock: ManualClock;
  beforeEach(() => {
    clock = new ManualClock(T0);
  });

  it('waits group_wait, then sends changes at group_interval only', async () => {
    const h = harness(clock, new MemoryStateStore());
    h.notifier.update([burstA, slow, { ...firing({ alertname: 'Pending' }, T0), state: 'pending' }]);
    clock.set(T0 + 29 * S);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(0);
    h.notifier.update([burstA, burstB, slow]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    // One notification per group (alertname), both Burst alerts together, no pending alert.
    expect(h.hook.summary().sort()).toEqual(['firing:Burst/firing,Burst/firing', 'firing:Slow/firing']);
    const burst = h.hook.sent.find((n) => n.groupLabels.alertname === 'Burst');
    expect(burst).toMatchObject({ receiver: 'ops', status: 'firing', groupLabels: { alertname: 'Burst' }, commonLabels: { alertname: 'Burst' } });
    expect(burst?.externalUrl).toBe('http://127.0.0.1:9464');

    // A change right after the flush waits for group_interval.
    h.notifier.update([burstA, burstB, resolved(slow, T0 + 40 * S)]);
    clock.set(T0 + 30 * S + 4 * M);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(2);
    clock.set(T0 + 30 * S + 5 * M);
    await h.notifier.tick();
    expect(h.hook.summary()[2]).toBe('resolved:Slow/resolved');
    expect(h.hook.sent).toHaveLength(3);
  });

  it('does not resend an unchanged group; resends after repeat_interval; sends resolved once', async () => {
    const h = harness(clock, new MemoryStateStore());
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(1);
    for (let i = 1; i < 48; i++) {
      clock.set(T0 + 30 * S + i * 5 * M);
      h.notifier.update([burstA]);
      await h.notifier.tick();
    }
    // 4h = 48 group intervals: nothing before it...
    expect(h.hook.sent).toHaveLength(1);
    clock.set(T0 + 30 * S + 48 * 5 * M);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(2);

    h.notifier.update([resolved(burstA, clock.now())]);
    for (let i = 1; i <= 5; i++) {
      clock.advance(5 * M);
      h.notifier.update([resolved(burstA, T0)]);
      await h.notifier.tick();
    }
    expect(h.hook.summary()).toEqual(['firing:Burst/firing', 'firing:Burst/firing', 'resolved:Burst/resolved']);
  });

  it('an alert that vanishes while firing is reported resolved', async () => {
    const h = harness(clock, new MemoryStateStore());
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    h.notifier.update([]);
    clock.advance(5 * M);
    await h.notifier.tick();
    expect(h.hook.summary()).toEqual(['firing:Burst/firing', 'resolved:Burst/resolved']);
  });

  it('with send_resolved false, sends no resolved message but fires again after resolution', async () => {
    const hook = new FakeIntegration('slack', false);
    const h = harness(clock, new MemoryStateStore(), {}, hook);
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    h.notifier.update([resolved(burstA, clock.now())]);
    clock.advance(5 * M);
    await h.notifier.tick();
    expect(hook.sent).toHaveLength(1);
    const again = firing(burstA.labels, clock.now());
    h.notifier.update([again]);
    clock.advance(5 * M);
    await h.notifier.tick();
    expect(hook.summary()).toEqual(['firing:Burst/firing', 'firing:Burst/firing']);
  });

  it('flushes at once an alert that has been firing longer than group_wait (restart case)', async () => {
    const h = harness(clock, new MemoryStateStore());
    clock.set(T0 + 10 * M);
    h.notifier.update([burstA]);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(1);
  });

  it('routes with continue to several receivers, each with its own dedup', async () => {
    const mail = new FakeIntegration('email');
    const chat = new FakeIntegration('slack');
    const config = notifyConfig({
      receivers: [
        { name: 'mail', console: {} },
        { name: 'chat', console: {} },
      ],
      route: {
        receiver: 'chat',
        group_by: ['alertname'],
        group_wait: '0s',
        routes: [{ matchers: ['severity="critical"'], receiver: 'mail', continue: true }],
      },
    });
    const h = harness(clock, new MemoryStateStore(), { config, integrationsFor: (r) => (r.name === 'mail' ? [mail] : [chat]) });
    const critical = firing({ alertname: 'Down', severity: 'critical' }, T0);
    h.notifier.update([critical, firing({ alertname: 'Minor', severity: 'warning' }, T0)]);
    await h.notifier.tick();
    expect(mail.summary()).toEqual(['firing:Down/firing']);
    expect(chat.summary().sort()).toEqual(['firing:Minor/firing']);
  });
});

describe('Notifier reload and resend', () => {
  it('a reload keeps the log: no duplicate after regrouping', async () => {
    const clock = new ManualClock(T0);
    const h = harness(clock, new MemoryStateStore());
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    h.notifier.reload(baseConfig());
    clock.advance(M);
    await h.notifier.tick();
    clock.advance(10 * M);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(1);
  });

  it('an integration with resendInterval gets firing groups that often; others do not', async () => {
    const clock = new ManualClock(T0);
    const am = new FakeIntegration('alertmanager', true, M);
    const chat = new FakeIntegration('slack');
    const h = harness(clock, new MemoryStateStore(), { integrationsFor: () => [am, chat] });
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    for (let i = 1; i <= 4; i++) {
      clock.advance(M);
      await h.notifier.tick();
    }
    expect(am.sent).toHaveLength(5);
    expect(chat.sent).toHaveLength(1);
  });
  it('links point at the bound HTTP address (server.listen port 0), also after a reload; external_url wins', async () => {
    const clock = new ManualClock(T0);
    const h = harness(clock, new MemoryStateStore(), { config: baseConfig({ server: { listen: '127.0.0.1:0' } }) });
    h.notifier.setListenUrl('http://127.0.0.1:40123/');
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.hook.sent[0]?.externalUrl).toBe('http://127.0.0.1:40123');

    h.notifier.reload(baseConfig({ server: { listen: '127.0.0.1:0' } }));
    h.notifier.update([burstA, slow]);
    clock.advance(10 * M);
    await h.notifier.tick();
    expect(h.hook.sent.map((n) => n.externalUrl)).toEqual(['http://127.0.0.1:40123', 'http://127.0.0.1:40123']);

    h.notifier.reload(baseConfig({ server: { listen: '127.0.0.1:0', external_url: 'https://watch.example/' } }));
    h.notifier.update([burstA, slow, burstB]);
    clock.advance(10 * M);
    await h.notifier.tick();
    expect(h.hook.sent.at(-1)?.externalUrl).toBe('https://watch.example');
  });
});

describe('Notifier silences, inhibition and mute intervals', () => {
  let clock: ManualClock;
  beforeEach(() => {
    clock = new ManualClock(T0);
  });

  it('does not notify silenced alerts and reports them in alertStatus', async () => {
    const h = harness(clock, new MemoryStateStore());
    const s = await h.notifier.silences.create({
      matchers: ['mft_instance="PROD2"'],
      endsAt: new Date(T0 + 3_600_000).toISOString(),
      createdBy: 'ana',
      comment: 'maintenance',
    });
    h.notifier.update([burstA, burstB]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.hook.sent[0]?.alerts.map((a) => a.labels.mft_instance)).toEqual(['PROD1']);
    expect(h.notifier.alertStatus(burstB)).toEqual({ silencedBy: [s.id], inhibitedBy: [], mutedBy: [] });
    expect(h.notifier.alertStatus(burstA).silencedBy).toEqual([]);
    // Once the silence is expired, the alert is new to the receiver and is sent at the next flush.
    await h.notifier.silences.expire(s.id);
    clock.advance(5 * M);
    await h.notifier.tick();
    expect(h.hook.sent[1]?.alerts.map((a) => a.labels.mft_instance).sort()).toEqual(['PROD1', 'PROD2']);
  });

  it('inhibits missing_file alerts while their source is down (built-in rule)', async () => {
    const h = harness(clock, new MemoryStateStore(), { config: baseConfig() });
    const down = firing({ alertname: 'TransferWatchSourceDown', source: 'prod', severity: 'critical' }, T0);
    const missing = firing({ alertname: 'DailyStatementMissing', source: 'prod' }, T0, { values: { rule_type: 'missing_file' } });
    h.notifier.update([down, missing]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.hook.summary()).toEqual(['firing:TransferWatchSourceDown/firing']);
    expect(h.notifier.alertStatus(missing).inhibitedBy).toEqual([down.fingerprint]);
    // Source back: the missing file is now notified.
    h.notifier.update([resolved(down, clock.now()), missing]);
    clock.advance(5 * M);
    await h.notifier.tick();
    expect(h.hook.summary().slice(1).sort()).toEqual(['firing:DailyStatementMissing/firing', 'resolved:TransferWatchSourceDown/resolved']);
  });

  it('mutes a route during its mute time interval, evaluated in its time zone', async () => {
    const config = baseConfig({
      mute_time_intervals: [
        { name: 'lunch', time_intervals: [{ times: [{ start_time: '09:00', end_time: '10:00' }], location: 'America/Sao_Paulo' }] },
      ],
      route: { receiver: 'ops', group_by: ['alertname'], group_wait: '30s', mute_time_intervals: ['lunch'] },
    });
    const h = harness(clock, new MemoryStateStore(), { config });
    // 12:00 UTC = 09:00 in São Paulo: muted.
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.hook.sent).toHaveLength(0);
    expect(h.notifier.alertStatus(burstA).mutedBy).toEqual(['lunch']);
    // 13:00 UTC = 10:00 local: the interval is over; the next flush sends.
    clock.set(T0 + 60 * M);
    await h.notifier.tick();
    expect(h.hook.summary()).toEqual(['firing:Burst/firing']);
    expect(h.notifier.alertStatus(burstA).mutedBy).toEqual([]);
  });
});

describe('Notifier outbox', () => {
  let clock: ManualClock;
  let dir: string;
  beforeEach(async () => {
    clock = new ManualClock(T0);
    dir = await mkdtemp(path.join(tmpdir(), 'tw-notifier-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function fileState(): Promise<FileStateStore> {
    const s = new FileStateStore(dir, silentLogger(), clock);
    await s.init();
    return s;
  }

  it('retries with exponential backoff and honours Retry-After', async () => {
    const h = harness(clock, new MemoryStateStore());
    h.hook.script.push(new NotifyError('503', true), new NotifyError('429', true, 30 * S), new NotifyError('503', true));
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(1);
    expect(h.notifier.queueLength).toBe(1);
    // First retry after 1 s * jitter(0.5) = 750 ms.
    clock.advance(749);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(1);
    clock.advance(1);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(2);
    // Retry-After 30 s beats the 1.5 s backoff.
    clock.advance(29 * S);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(2);
    clock.advance(1 * S);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(3);
    // Third failure: 4 s * 0.75 = 3 s.
    clock.advance(3 * S);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(4);
    expect(h.hook.sent).toHaveLength(1);
    expect(h.notifier.queueLength).toBe(0);
    expect(h.counts).toMatchObject({ 'ops/webhook/failed': 3, 'ops/webhook/sent': 1 });
  });

  it('gives up after giveUpAfterMs, loudly, and counts it', async () => {
    const h = harness(clock, new MemoryStateStore(), { giveUpAfterMs: 10 * M });
    for (let i = 0; i < 100; i++) h.hook.script.push(new NotifyError('503', true));
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    for (let i = 0; i < 30 && h.notifier.queueLength > 0; i++) {
      clock.advance(M);
      await h.notifier.tick();
    }
    expect(h.notifier.queueLength).toBe(0);
    expect(h.notifier.givenUpCount).toBe(1);
    expect(h.counts.givenUp).toBe(1);
    expect(h.counts['ops/webhook/failed']).toBeGreaterThan(5);
    const dropped = h.logs.map((l) => JSON.parse(l) as { level: string; msg: string }).find((l) => l.msg.includes('NOTIFICATION DROPPED'));
    expect(dropped?.level).toBe('error');
    // Not retried at every flush afterwards: the same content waits for a change or the repeat interval.
    const attempts = h.hook.attempts;
    clock.advance(5 * M);
    await h.notifier.tick();
    expect(h.hook.attempts).toBe(attempts);
  });

  it('gives up at once on a non-retryable error', async () => {
    const h = harness(clock, new MemoryStateStore());
    h.hook.script.push(new NotifyError('400 bad payload', false));
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await h.notifier.tick();
    expect(h.notifier.givenUpCount).toBe(1);
    expect(h.notifier.queueLength).toBe(0);
  });

  it('a restart after delivery sends nothing twice', async () => {
    const first = harness(clock, await fileState());
    await first.notifier.restore();
    first.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    await first.notifier.tick();
    expect(first.hook.sent).toHaveLength(1);
    // Crash (no stop) and start again on the same directory with the same alerts.
    clock.advance(10 * S);
    const second = harness(clock, await fileState());
    await second.notifier.restore();
    second.notifier.update([burstA]);
    await second.notifier.tick();
    clock.advance(10 * M);
    await second.notifier.tick();
    expect(second.hook.sent).toHaveLength(0);
    // ...but a change after the restart is sent, once.
    second.notifier.update([resolved(burstA, clock.now())]);
    clock.advance(5 * M);
    await second.notifier.tick();
    expect(second.hook.summary()).toEqual(['resolved:Burst/resolved']);
  });

  it('a restart with a pending notification sends it exactly once', async () => {
    const first = harness(clock, await fileState());
    await first.notifier.restore();
    first.hook.script.push(new NotifyError('503', true));
    first.notifier.update([burstA, burstB]);
    clock.set(T0 + 30 * S);
    await first.notifier.tick();
    expect(first.hook.sent).toHaveLength(0);
    expect(first.notifier.queueLength).toBe(1);

    const second = harness(clock, await fileState());
    await second.notifier.restore();
    expect(second.notifier.queueLength).toBe(1);
    second.notifier.update([burstA, burstB]);
    clock.advance(S);
    await second.notifier.tick();
    clock.advance(10 * M);
    await second.notifier.tick();
    expect(second.hook.summary()).toEqual(['firing:Burst/firing,Burst/firing']);
    expect(second.notifier.queueLength).toBe(0);
  });

  it('a crash between the nflog write and the outbox removal sends nothing twice', async () => {
    const real = await fileState();
    let failOutbox = false;
    // The outbox write after the send fails, as if the process died right after the nflog write.
    const flaky: StateStore = {
      load: (key) => real.load(key),
      save: (key, value) => (failOutbox && key === 'outbox' ? Promise.reject(new Error('killed')) : real.save(key, value)),
      append: (key, record) => real.append(key, record),
      journal: (key) => real.journal(key),
    };
    const first = harness(clock, flaky);
    await first.notifier.restore();
    first.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    // Let the enqueue be written, then fail the writes that follow the send.
    const send = first.hook.send.bind(first.hook);
    first.hook.send = (n) => {
      failOutbox = true;
      return send(n);
    };
    await first.notifier.tick();
    expect(first.hook.sent).toHaveLength(1);
    expect(await real.load('outbox')).toMatchObject({ entries: [{ key: expect.any(String) as unknown }] });

    const second = harness(clock, await fileState());
    await second.notifier.restore();
    expect(second.notifier.queueLength).toBe(0);
    second.notifier.update([burstA]);
    clock.advance(10 * M);
    await second.notifier.tick();
    expect(second.hook.sent).toHaveLength(0);
  });

  it('stop() sends what is due and persists the rest', async () => {
    const state = await fileState();
    const h = harness(clock, state, { stopTimeoutMs: 2_000 });
    await h.notifier.restore();
    h.notifier.start();
    h.notifier.update([burstA]);
    clock.set(T0 + 30 * S);
    // Flush the group without sending: the first send fails and is scheduled for a retry.
    h.hook.script.push(new NotifyError('503', true));
    await h.notifier.tick();
    expect(h.notifier.queueLength).toBe(1);
    clock.advance(5 * S);
    await h.notifier.stop();
    expect(h.hook.sent).toHaveLength(1);
    expect(await state.load('outbox')).toMatchObject({ entries: [] });
  });
});
