import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { Notifier } from '../../src/notify/notifier.js';
import { MemoryStateStore, type StateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { titleOf } from '../../src/notify/templates/template-context.js';
import { defaultText } from '../../src/notify/templates/default-text.js';
import { buildTemplateContext } from '../../src/notify/templates/template-context.js';
import { FakeIntegration, firing, notifyConfig, resolved } from './helpers.js';

/**
 * Contract 14 in the notifier, on the injected clock: an ack holds the repeats and the escalation of the alerts it
 * names, never their resolution, never a new alert; escalation steps go once each, after their delay from the
 * group's first notification, to their receiver, and a leader that takes over (a new notifier on the same state)
 * sends the steps not sent yet and none twice.
 */

const T0 = Date.parse('2026-12-02T03:00:00Z');
const M = 60_000;

function setup(state: StateStore = new MemoryStateStore(), clock = new ManualClock(T0)) {
  const hooks = { oncall: new FakeIntegration(), manager: new FakeIntegration(), head: new FakeIntegration() };
  const escalated: Array<{ step: number; receiver: string }> = [];
  const notifier = new Notifier({
    config: notifyConfig({
      receivers: [{ name: 'oncall', console: {} }, { name: 'manager', console: {} }, { name: 'head', console: {} }],
      route: {
        receiver: 'oncall',
        group_by: ['alertname'],
        group_wait: '30s',
        group_interval: '5m',
        repeat_interval: '1h',
        escalate: [
          { after: '15m', receiver: 'manager' },
          { after: '45m', receiver: 'head' },
        ],
      },
    }),
    clock,
    logger: silentLogger(),
    state,
    random: () => 0.5,
    integrationsFor: (r) => [hooks[r.name as keyof typeof hooks]],
    onEscalated: (e) => escalated.push({ step: e.step, receiver: e.receiver }),
  });
  return { clock, notifier, hooks, escalated, state };
}

async function at(h: ReturnType<typeof setup>, minutes: number, alerts?: Alert[]): Promise<void> {
  h.clock.set(T0 + minutes * M);
  if (alerts) h.notifier.update(alerts);
  await h.notifier.tick();
}

const statement = firing({ alertname: 'StatementMissing', user: 'BANK1' }, T0);
const orders = firing({ alertname: 'StatementMissing', user: 'BANK2' }, T0 + 20 * M);

describe('acknowledgements and escalation in the notifier (contract 14)', () => {
  it('without an ack: repeats every repeat_interval and escalates each step once, at its delay from the first notification', async () => {
    const h = setup();
    await h.notifier.restore();
    await at(h, 0, [statement]);
    await at(h, 1);
    expect(h.hooks.oncall.sent).toHaveLength(1);
    await at(h, 15);
    expect(h.hooks.manager.sent).toHaveLength(0);
    await at(h, 16);
    expect(h.hooks.manager.sent).toHaveLength(1);
    const n = h.hooks.manager.sent[0];
    expect(n?.escalation).toEqual({ step: 1, of: 2, since: T0 + M, receiver: 'oncall' });
    expect(titleOf(n!)).toBe('[ESCALATION 1/2: unacknowledged since 2026-12-02 03:01:00 UTC] [FIRING:1] StatementMissing {user=BANK1}');
    await at(h, 30);
    expect(h.hooks.manager.sent).toHaveLength(1);
    await at(h, 46);
    expect(h.hooks.head.sent).toHaveLength(1);
    await at(h, 62);
    expect(h.hooks.oncall.sent).toHaveLength(2);
    await at(h, 120);
    expect({ manager: h.hooks.manager.sent.length, head: h.hooks.head.sent.length }).toEqual({ manager: 1, head: 1 });
    expect(h.escalated).toEqual([
      { step: 1, receiver: 'manager' },
      { step: 2, receiver: 'head' },
    ]);
  });

  it('an ack holds repeats and escalation, a new alert is told as new, and the resolution names who acknowledged', async () => {
    const h = setup();
    await h.notifier.restore();
    await at(h, 0, [statement]);
    await at(h, 1);
    expect(h.hooks.oncall.sent).toHaveLength(1);
    h.clock.set(T0 + 5 * M);
    const ack = await h.notifier.acks.create({ matchers: ['alertname="StatementMissing"'], by: 'ana', comment: 'calling the bank' }, h.notifier.firing());
    expect(ack.fingerprints).toEqual([statement.fingerprint]);
    await at(h, 16);
    await at(h, 62);
    expect(h.hooks.manager.sent, 'no escalation while acknowledged').toHaveLength(0);
    expect(h.hooks.oncall.sent, 'no repeat while acknowledged').toHaveLength(1);

    // A second alert joins the group: told as new (with the first shown acknowledged), and it is not acknowledged.
    await at(h, 70, [statement, orders]);
    await at(h, 71);
    expect(h.hooks.oncall.sent).toHaveLength(2);
    const joined = h.hooks.oncall.sent[1]!;
    expect(joined.alerts.map((a) => [a.labels.user, a.ack?.by ?? null])).toEqual([
      ['BANK1', 'ana'],
      ['BANK2', null],
    ]);
    // Unacknowledged again (the new alert): the escalation goes on from the group's first notification.
    await at(h, 72);
    expect(h.hooks.manager.sent).toHaveLength(1);
    expect(h.hooks.manager.sent[0]?.alerts.map((a) => a.labels.user)).toEqual(['BANK1', 'BANK2']);

    // The acknowledged alert resolves: told, naming who acknowledged; its ack has ended.
    await at(h, 80, [resolved(statement, T0 + 80 * M), orders]);
    await at(h, 81);
    const told = h.hooks.oncall.sent.at(-1)!;
    const bank1 = told.alerts.find((a) => a.labels.user === 'BANK1');
    expect(bank1?.state).toBe('resolved');
    expect(bank1?.ack).toMatchObject({ by: 'ana', comment: 'calling the bank' });
    expect(defaultText(buildTemplateContext(told, (v) => v))).toContain('Acknowledged by ana at 2026-12-02 03:05:00 UTC: calling the bank');
    expect(h.notifier.acks.get(ack.id)).toMatchObject({ state: 'ended', endedBy: null });
  });

  it('an ack taken back lets the repeats and the escalation go on', async () => {
    const h = setup();
    await h.notifier.restore();
    await at(h, 0, [statement]);
    await at(h, 1);
    h.clock.set(T0 + 2 * M);
    const ack = await h.notifier.acks.create({ fingerprints: [statement.fingerprint], by: 'ana' }, h.notifier.firing());
    await at(h, 20);
    expect(h.hooks.manager.sent).toHaveLength(0);
    h.clock.set(T0 + 21 * M);
    expect(await h.notifier.acks.remove(ack.id, 'ana')).toBe(true);
    await at(h, 22);
    expect(h.hooks.manager.sent).toHaveLength(1);
    expect(h.notifier.acks.get(ack.id)).toMatchObject({ state: 'ended', endedBy: 'ana' });
  });

  it('refuses an ack that selects no firing alert, and a body without matchers or fingerprints', async () => {
    const h = setup();
    await h.notifier.restore();
    await at(h, 0, [statement]);
    await expect(h.notifier.acks.create({ matchers: ['alertname="Other"'], by: 'ana' }, h.notifier.firing())).rejects.toMatchObject({ code: 'ack_no_alert' });
    await expect(h.notifier.acks.create({ by: 'ana' }, h.notifier.firing())).rejects.toMatchObject({ code: 'ack_invalid', message: expect.stringContaining('either matchers or fingerprints') });
    await expect(h.notifier.acks.create({ matchers: ['alertname=~"("'], by: 'ana' }, h.notifier.firing())).rejects.toMatchObject({ code: 'ack_invalid' });
  });

  it('a leader that takes over sends the steps not sent yet, and none twice', async () => {
    const state = new MemoryStateStore();
    const clock = new ManualClock(T0);
    const first = setup(state, clock);
    await first.notifier.restore();
    await at(first, 0, [statement]);
    await at(first, 1);
    await at(first, 16);
    expect(first.hooks.manager.sent).toHaveLength(1);
    first.notifier.halt();

    // The next leader: the same shared state, a new notifier, the alert as the alert store restores it.
    const second = setup(state, clock);
    await second.notifier.restore();
    await at(second, 20, [statement]);
    await at(second, 21);
    await at(second, 30);
    expect(second.hooks.manager.sent, 'step 1 was sent by the first leader').toHaveLength(0);
    await at(second, 46);
    expect(second.hooks.head.sent).toHaveLength(1);
    expect(second.hooks.head.sent[0]?.escalation?.since).toBe(T0 + 1 * M);
  });
  it('a group that resolves before a step ends its episode: no step, and a new firing counts from its own first notification', async () => {
    const h = setup();
    await h.notifier.restore();
    await at(h, 0, [statement]);
    await at(h, 1);
    await at(h, 10, [resolved(statement, T0 + 10 * M)]);
    await at(h, 11);
    await at(h, 20);
    expect(h.hooks.manager.sent, 'resolved before its first step').toHaveLength(0);
    const again = firing({ alertname: 'StatementMissing', user: 'BANK1' }, T0 + 30 * M);
    await at(h, 30, [again]);
    await at(h, 31);
    await at(h, 45);
    expect(h.hooks.manager.sent).toHaveLength(0);
    await at(h, 46);
    expect(h.hooks.manager.sent).toHaveLength(1);
    expect(h.hooks.manager.sent[0]?.escalation?.since).toBe(T0 + 31 * M);
  });
});
