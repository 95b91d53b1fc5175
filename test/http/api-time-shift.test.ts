import { describe, expect, it } from 'vitest';
import { ApiTimeShift } from '../../src/http/api-time-shift.js';
import type { AlertmanagerView, SilenceApi } from '../../src/http/daemon-api.js';

const HOUR = 3_600_000;

describe('ApiTimeShift', () => {
  it('passes everything through untouched when the daemon runs on the wall clock', () => {
    const api: SilenceApi = { list: () => [], get: () => undefined, create: async (x) => x, expire: async () => true };
    const shift = new ApiTimeShift(0);
    expect(shift.silenceApi(api)).toBe(api);
    const value = { startsAt: '2026-11-25T10:00:00.000Z' };
    expect(shift.out(value)).toBe(value);
  });

  it('moves silences between the clients’ wall clock and the daemon’s, both ways; alerts stay on the daemon’s one clock', async () => {
    const created: unknown[] = [];
    const stored = { id: 's1', startsAt: '2026-11-25T13:00:00.000Z', endsAt: '2026-11-25T14:00:00.000Z', updatedAt: '2026-11-25T13:00:00.000Z', comment: 'endsAt stays text' };
    const api: SilenceApi = {
      list: () => [stored],
      get: (id) => (id === 's1' ? stored : undefined),
      create: async (input) => {
        created.push(input);
        return stored;
      },
      expire: async () => true,
    };
    // The daemon's clock is 3 hours ahead of its clients'.
    const shift = new ApiTimeShift(3 * HOUR);
    const clients = shift.silenceApi(api);
    const answer = await clients.create({ matchers: ['a="b"'], startsAt: '2026-11-25T10:00:00Z', endsAt: '2026-11-25T11:00:00Z', createdBy: 'x' });
    expect(created).toEqual([{ matchers: ['a="b"'], startsAt: '2026-11-25T13:00:00.000Z', endsAt: '2026-11-25T14:00:00.000Z', createdBy: 'x' }]);
    expect(answer).toEqual({ id: 's1', startsAt: '2026-11-25T10:00:00.000Z', endsAt: '2026-11-25T11:00:00.000Z', updatedAt: '2026-11-25T10:00:00.000Z', comment: 'endsAt stays text' });
    expect(clients.list()).toEqual([answer]);
    expect(clients.get('nope')).toBeUndefined();

    const alert = { labels: { alertname: 'A' }, startsAt: '2026-11-25T13:30:00.000Z', updatedAt: '2026-11-25T13:31:00.000Z', endsAt: '2026-11-25T13:35:00.000Z' };
    const view = shift.alertmanagerView({
      status: () => ({}),
      receivers: () => [],
      alerts: () => [alert],
      alertGroups: () => [{ alerts: [alert] }],
      silences: () => [stored],
    } as unknown as AlertmanagerView);
    expect(view.alerts({} as never)).toEqual([alert]);
    expect(view.alertGroups({} as never)).toEqual([{ alerts: [alert] }]);
    expect(view.silences(undefined as never)).toEqual([answer]);
  });
});
