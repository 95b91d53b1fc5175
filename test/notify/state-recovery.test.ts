import { describe, expect, it } from 'vitest';
import { Notifier } from '../../src/notify/notifier.js';
import { MemoryStateStore, type StateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { FakeIntegration, firing, notifyConfig } from './helpers.js';

/** A state store that refuses every write while `broken` (a read-only or full state dir), over a memory store. */
class FlakyStateStore implements StateStore {
  broken = false;
  constructor(readonly inner: MemoryStateStore) {}
  load(key: string): Promise<unknown> {
    return this.inner.load(key);
  }
  journal(key: string): Promise<unknown[]> {
    return this.inner.journal(key);
  }
  save(key: string, value: unknown): Promise<void> {
    return this.broken ? Promise.reject(new Error('EROFS: read-only file system')) : this.inner.save(key, value);
  }
  append(key: string, record: unknown): Promise<void> {
    return this.broken ? Promise.reject(new Error('ENOSPC: no space left on device')) : this.inner.append(key, record);
  }
}

const T0 = Date.parse('2026-11-24T10:00:00Z');
const config = () =>
  notifyConfig({
    receivers: [{ name: 'ops', console: {} }],
    route: { receiver: 'ops', group_by: ['alertname', 'user'], group_wait: '10s', group_interval: '1m', repeat_interval: '4h' },
  });

describe('a state dir that refuses writes and comes back', () => {
  it('writes the log, the outbox and the silences in full again, so a kill -9 afterwards repeats nothing', async () => {
    const clock = new ManualClock(T0);
    const memory = new MemoryStateStore();
    const state = new FlakyStateStore(memory);
    const hook = new FakeIntegration('console');
    const notifier = new Notifier({ config: config(), clock, logger: silentLogger(), state, integrationsFor: () => [hook], random: () => 0.5 });
    await notifier.restore();
    const alerts = ['BANK1', 'BANK2', 'BANK3'].map((user) => firing({ alertname: 'Burst', user }, T0));

    state.broken = true;
    notifier.update(alerts);
    clock.set(T0 + 10_000);
    await notifier.tick();
    // Delivered from memory although nothing could be written.
    expect(hook.sent).toHaveLength(3);
    await expect(notifier.silences.create({ matchers: [{ name: 'user', value: 'BANK9', isRegex: false, isEqual: true }], startsAt: new Date(T0).toISOString(), endsAt: new Date(T0 + 3_600_000).toISOString(), createdBy: 'ana', comment: 'c' })).rejects.toThrow(/EROFS/);
    expect(notifier.nextWakeup()).toBeLessThanOrEqual(clock.now() + 1_000);

    state.broken = false;
    clock.advance(1_000);
    await notifier.tick();

    // kill -9 now: a new process on the same state sends nothing again and knows the silence.
    const hook2 = new FakeIntegration('console');
    const restarted = new Notifier({ config: config(), clock, logger: silentLogger(), state: memory, integrationsFor: () => [hook2], random: () => 0.5 });
    await restarted.restore();
    expect(restarted.queueLength).toBe(0);
    expect(restarted.silences.list().map((s) => s.createdBy)).toEqual(['ana']);
    restarted.update(alerts);
    for (const at of [T0 + 30_000, T0 + 120_000, T0 + 600_000]) {
      clock.set(at);
      await restarted.tick();
    }
    expect(hook2.sent).toHaveLength(0);
  });
});
