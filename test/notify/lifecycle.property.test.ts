import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import type { Notification } from '../../src/notify/notification.js';
import { Notifier } from '../../src/notify/notifier.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { FakeIntegration, firing, notifyConfig } from './helpers.js';

/**
 * The truthful lifecycle, for every order of {fire, resolve, silence, unsilence, inhibit, uninhibit, mute,
 * unmute, restart, wait} fast-check can generate, against a small reference model of what the receiver
 * knows: for each alert the last thing it was told (firing or resolved) and when it was last sent anything.
 *
 * Checked at every message: it is not empty; every alert it calls firing fires and is visible; every alert it
 * calls resolved has resolved; nothing is sent while the route is muted; and it tells something new (a firing
 * alert not known to fire, a resolution) or repeat_interval has passed. Checked at the end, after everything
 * settled: every visible firing alert is known to fire, and no resolved alert is still believed to fire.
 */

const T0 = Date.parse('2024-03-05T12:00:00Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const REPEAT = 1 * H;

const USERS = ['alice', 'bob', 'carol'] as const;
type User = (typeof USERS)[number];

type Event =
  | { kind: 'fire' | 'resolve' | 'silence' | 'unsilence'; user: User }
  | { kind: 'inhibit' | 'uninhibit' | 'mute' | 'unmute' | 'restart' }
  | { kind: 'wait'; ms: number };

const user = fc.constantFrom(...USERS);
const event: fc.Arbitrary<Event> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('fire' as const), user }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('resolve' as const), user }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('silence' as const), user }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('unsilence' as const), user }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('inhibit' as const, 'uninhibit' as const, 'mute' as const, 'unmute' as const, 'restart' as const) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.constantFrom(10 * S, 1 * M, 6 * M, 20 * M, 70 * M) }) },
);

/** Muted from 00:00 to 06:00 UTC every day. */
function mutedAt(t: number): boolean {
  return new Date(t).getUTCHours() < 6;
}

function config() {
  return notifyConfig({
    receivers: [{ name: 'ops', console: {} }],
    route: {
      receiver: 'ops',
      group_by: ['alertname'],
      group_wait: '30s',
      group_interval: '5m',
      repeat_interval: '1h',
      mute_time_intervals: ['night'],
    },
    inhibit_rules: [{ source_matchers: ['alertname="Maintenance"'], target_matchers: ['alertname="Burst"'], equal: [] }],
    mute_time_intervals: [{ name: 'night', time_intervals: [{ times: [{ start_time: '00:00', end_time: '06:00' }] }] }],
  });
}

/** What is true: the alert store's view, plus who is hidden. */
class World {
  readonly alerts = new Map<User, Alert>();
  maintenance: Alert | undefined;
  readonly silenceIds = new Map<User, string>();

  current(): Alert[] {
    return [...this.alerts.values(), ...(this.maintenance ? [this.maintenance] : [])];
  }

  firingVisible(user: string): boolean {
    const a = this.alerts.get(user as User);
    return a?.state === 'firing' && !this.silenceIds.has(user as User) && this.maintenance?.state !== 'firing';
  }
}

/** The receiver's knowledge, built only from the messages it got. */
class ReceiverModel {
  readonly told = new Map<string, 'firing' | 'resolved'>();
  /** When the episode it was last told about began: a resolution of a new episode is news too. */
  readonly episode = new Map<string, number>();
  lastSentAt = -Infinity;

  /** Throws when a message is untrue, empty, muted or says nothing new before repeat_interval. */
  receive(n: Notification, now: number, world: World): void {
    expect(n.alerts.length, 'a message about nothing').toBeGreaterThan(0);
    expect(mutedAt(now), 'a message while the route is muted').toBe(false);
    let news = now - this.lastSentAt >= REPEAT;
    for (const a of n.alerts) {
      const user = a.labels.user ?? '';
      const truth = world.alerts.get(user as User);
      if (a.state === 'firing') {
        expect(world.firingVisible(user), `told ${user} fires while it ${truth?.state ?? 'is unknown'} or is hidden`).toBe(true);
        if (this.told.get(user) !== 'firing') news = true;
      } else {
        expect(truth?.state, `told ${user} resolved while it fires`).toBe('resolved');
        if (this.told.get(user) !== 'resolved' || this.episode.get(user) !== a.activeAt) news = true;
      }
    }
    expect(news, `a message with nothing new ${(now - this.lastSentAt) / M} min after the last one`).toBe(true);
    for (const a of n.alerts) {
      this.told.set(a.labels.user ?? '', a.state === 'firing' ? 'firing' : 'resolved');
      this.episode.set(a.labels.user ?? '', a.activeAt);
    }
    this.lastSentAt = now;
  }
}

async function play(events: Event[]): Promise<void> {
  const clock = new ManualClock(T0);
  const state = new MemoryStateStore();
  const world = new World();
  const receiver = new ReceiverModel();
  let hook = new FakeIntegration('console', true);
  let seen = 0;
  const make = (): Notifier => {
    hook = new FakeIntegration('console', true);
    seen = 0;
    return new Notifier({ config: config(), clock, logger: silentLogger(), state, random: () => 0.5, integrationsFor: () => [hook] });
  };
  let notifier = make();
  await notifier.restore();

  const drain = (): void => {
    for (; seen < hook.sent.length; seen++) {
      const n = hook.sent[seen];
      if (n && n.groupLabels.alertname === 'Burst') receiver.receive(n, clock.now(), world);
    }
  };
  /** Run the notifier's timers up to `until`, as the real timer would. */
  const advance = async (until: number): Promise<void> => {
    for (;;) {
      const next = notifier.nextWakeup();
      if (next > until) break;
      clock.set(Math.max(clock.now(), next));
      await notifier.tick();
      drain();
    }
    clock.set(until);
    await notifier.tick();
    drain();
  };
  const publish = async (): Promise<void> => {
    notifier.update(world.current());
    await advance(clock.now());
  };

  for (const e of events) {
    const now = clock.now();
    switch (e.kind) {
      case 'fire': {
        const before = world.alerts.get(e.user);
        if (before?.state !== 'firing') world.alerts.set(e.user, firing({ alertname: 'Burst', user: e.user }, now));
        break;
      }
      case 'resolve': {
        const before = world.alerts.get(e.user);
        if (before?.state === 'firing') world.alerts.set(e.user, { ...before, state: 'resolved', resolvedAt: now });
        break;
      }
      case 'silence':
        if (!world.silenceIds.has(e.user)) {
          const s = await notifier.silences.create({
            matchers: [{ name: 'user', value: e.user, isRegex: false, isEqual: true }],
            startsAt: new Date(now).toISOString(),
            endsAt: new Date(now + 1000 * H).toISOString(),
            createdBy: 'model',
            comment: 'property test',
          });
          world.silenceIds.set(e.user, s.id);
        }
        break;
      case 'unsilence': {
        const id = world.silenceIds.get(e.user);
        if (id) await notifier.silences.expire(id);
        world.silenceIds.delete(e.user);
        break;
      }
      case 'inhibit':
        if (world.maintenance?.state !== 'firing') world.maintenance = firing({ alertname: 'Maintenance' }, now);
        break;
      case 'uninhibit':
        if (world.maintenance?.state === 'firing') world.maintenance = { ...world.maintenance, state: 'resolved', resolvedAt: now };
        break;
      case 'mute':
        if (!mutedAt(now)) await advance(nextUtcHour(now, 0) + M);
        break;
      case 'unmute':
        if (mutedAt(now)) await advance(nextUtcHour(now, 6) + M);
        break;
      case 'restart':
        await notifier.stop(100);
        notifier = make();
        await notifier.restore();
        break;
      case 'wait':
        await advance(now + e.ms);
        break;
    }
    await publish();
  }

  // Let everything settle outside the muted hours: every flush and resolution has had its chance.
  if (mutedAt(clock.now())) await advance(nextUtcHour(clock.now(), 6) + M);
  await advance(clock.now() + 2 * H);
  for (const u of USERS) {
    const truth = world.alerts.get(u);
    if (world.firingVisible(u)) expect(receiver.told.get(u), `${u} fires and is visible but the receiver was not told`).toBe('firing');
    if (truth?.state === 'resolved') expect(receiver.told.get(u), `${u} resolved but the receiver still believes it fires`).not.toBe('firing');
  }
  await notifier.stop(100);
}

function nextUtcHour(t: number, hour: number): number {
  const d = new Date(t);
  const at = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), hour);
  return at > t ? at : at + 24 * H;
}

describe('notification lifecycle against a reference model (property)', () => {
  it('never says something untrue, never repeats before repeat_interval, and tells every change in the end', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 5, maxLength: 40 }), async (events) => {
        await play(events);
      }),
      { numRuns: 300 },
    );
  }, 120_000);

  it('the probe case: silenced after its first notification, nothing; unsilenced, nothing before repeat_interval; resolved, one RESOLVED', async () => {
    await play([
      { kind: 'fire', user: 'alice' },
      { kind: 'wait', ms: 1 * M },
      { kind: 'silence', user: 'alice' },
      { kind: 'wait', ms: 20 * M },
      { kind: 'unsilence', user: 'alice' },
      { kind: 'wait', ms: 20 * M },
      { kind: 'resolve', user: 'alice' },
    ]);
  });
});
