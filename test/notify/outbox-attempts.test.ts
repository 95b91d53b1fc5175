import { describe, expect, it } from 'vitest';
import { Outbox } from '../../src/notify/deliver/outbox.js';
import type { Notification } from '../../src/notify/notification.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { silentLogger } from '../../src/util/logger.js';

const notification: Notification = {
  receiver: 'oncall',
  groupKey: '{}:{alertname="Burst"}',
  status: 'firing',
  groupLabels: { alertname: 'Burst' },
  commonLabels: { alertname: 'Burst' },
  commonAnnotations: {},
  alerts: [],
  externalUrl: '',
  displayTimezone: 'UTC',
};

describe('Outbox attempts across a kill -9', () => {
  it('counts an attempt that began before the process died, so the one sent again is the next attempt', async () => {
    const state = new MemoryStateStore();
    const first = new Outbox(state, silentLogger());
    const entry = first.add({ key: 'k', receiver: 'oncall', integration: 'webhook', notification, firing: ['a'], resolved: [], createdAt: 0, attempts: 0, nextAttemptAt: 0, giveUpAt: 1e12 });
    await first.persist();
    await first.beginAttempt(entry);
    // Killed while that request was in flight: a new process restores the outbox.
    const second = new Outbox(state, silentLogger());
    await second.restore();
    expect(second.all().map((e) => [e.id, e.attempts])).toEqual([[entry.id, 1]]);
    // A snapshot written afterwards holds the count itself, and replaces the journal's record.
    const restored = second.all()[0]!;
    restored.attempts = 2;
    await second.persist();
    const third = new Outbox(state, silentLogger());
    await third.restore();
    expect(third.all().map((e) => e.attempts)).toEqual([2]);
  });
});
