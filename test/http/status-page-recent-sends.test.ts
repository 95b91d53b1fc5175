import { describe, expect, it } from 'vitest';
import { NotifyError } from '../../src/notify/notification.js';
import { Notifier } from '../../src/notify/notifier.js';
import { RecentSends } from '../../src/notify/deliver/recent-sends.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { FakeIntegration, firing, notifyConfig, resolved } from '../notify/helpers.js';

/** The notifier's bounded ring of recent send outcomes, which the status page shows per receiver. */

const T0 = Date.parse('2024-03-05T12:00:00Z');
const SECRET_URL = 'https://hooks.example.com/services/T000/B000/SECRETSECRET';

/** A notifier with one webhook receiver `ops` on `hook`, routed with these timings. */
function webhookNotifier(clock: ManualClock, hook: FakeIntegration, route: { group_by: string[]; group_wait: string; group_interval: string }): Notifier {
  return new Notifier({
    config: notifyConfig({
      receivers: [{ name: 'ops', webhook: { url: SECRET_URL } }],
      route: { receiver: 'ops', repeat_interval: '4h', ...route },
    }),
    clock,
    logger: silentLogger(),
    state: new MemoryStateStore(),
    random: () => 0.5,
    integrationsFor: () => [hook],
  });
}

describe('Notifier.recentSends', () => {
  it('names the alert of a phase change once: the jeopardy warning it took over from is not listed as a second alert', async () => {
    const clock = new ManualClock(T0);
    const hook = new FakeIntegration();
    const notifier = webhookNotifier(clock, hook, { group_by: ['alertname', 'user'], group_wait: '0s', group_interval: '1s' });
    const warning = firing({ alertname: 'StatementMissing', user: 'BANK2', phase: 'jeopardy' }, T0);
    notifier.update([warning]);
    await notifier.tick();
    clock.advance(60_000);
    notifier.update([resolved(warning, T0 + 60_000), firing({ alertname: 'StatementMissing', user: 'BANK2' }, T0 + 60_000)]);
    await notifier.tick();
    const latest = notifier.recentSends()[0];
    expect(latest?.alerts).toEqual(['StatementMissing {user=BANK2}']);
    // The webhook still carries both, the warning resolved.
    expect(hook.sent.at(-1)?.alerts.map((a) => `${a.state}:${a.labels.phase ?? ''}`).sort()).toEqual(['firing:', 'resolved:jeopardy']);
  });
  it('records retried (redacted) and sent attempts in the history’s words, newest first', async () => {
    const clock = new ManualClock(T0);
    const hook = new FakeIntegration();
    const notifier = webhookNotifier(clock, hook, { group_by: ['alertname'], group_wait: '30s', group_interval: '5m' });
    hook.script.push(new NotifyError(`503 from ${SECRET_URL}`, true));
    notifier.update([firing({ alertname: 'Burst', mft_instance: 'PROD1' }, T0)]);
    clock.set(T0 + 30_000);
    await notifier.tick();
    clock.advance(10_000);
    await notifier.tick();

    const recent = notifier.recentSends();
    expect(recent.map((r) => [r.outcome, r.receiver, r.integration, r.status, r.alerts.join(','), r.attempts])).toEqual([
      ['sent', 'ops', 'webhook', 'firing', 'Burst {mft_instance=PROD1}', 2],
      ['retrying', 'ops', 'webhook', 'firing', 'Burst {mft_instance=PROD1}', 1],
    ]);
    expect(recent[1]?.error).toContain('503');
    expect(recent[1]?.error).not.toContain('SECRETSECRET');
    expect(recent[0]?.at).toBe(T0 + 40_000);
  });

  it('keeps only the newest entries up to its capacity', () => {
    const ring = new RecentSends(3);
    for (let i = 0; i < 5; i++) {
      ring.add({ at: i, receiver: 'r', integration: 'console', outcome: 'sent', status: 'firing', alerts: [`A${i}`], attempts: 1 });
    }
    expect(ring.list().map((o) => o.at)).toEqual([4, 3, 2]);
  });
});
