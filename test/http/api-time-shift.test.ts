import { describe, expect, it } from 'vitest';
import { ApiTimeShift } from '../../src/http/api-time-shift.js';
import type { SilenceApi } from '../../src/http/daemon-api.js';

const HOUR = 3_600_000;

describe('ApiTimeShift', () => {
  it('passes everything through untouched when the daemon runs on the wall clock', () => {
    const api: SilenceApi = { list: () => [], get: () => undefined, create: async (x) => x, expire: async () => true };
    const shift = new ApiTimeShift(0);
    expect(shift.silenceApi(api)).toBe(api);
    const value = { startsAt: '2026-11-25T10:00:00.000Z' };
    expect(shift.in(value)).toBe(value);
  });

  it('moves a client’s new silence into the daemon’s time, and answers on the daemon’s one clock', async () => {
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
    const answer = await clients.create({ matchers: ['a="b"'], startsAt: '2026-11-25T10:00:00Z', endsAt: '2026-11-25T11:00:00Z', createdBy: 'x', comment: 'endsAt' });
    expect(created).toEqual([{ matchers: ['a="b"'], startsAt: '2026-11-25T13:00:00.000Z', endsAt: '2026-11-25T14:00:00.000Z', createdBy: 'x', comment: 'endsAt' }]);
    // What the daemon stored, as the pages and the history show it: no second clock in the answers.
    expect(answer).toEqual(stored);
    expect(clients.list()).toEqual([stored]);
    expect(clients.get('s1')).toEqual(stored);
    expect(clients.get('nope')).toBeUndefined();
  });
});
