import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SilenceError } from '../../../src/notify/mute/silence.js';
import { SilenceStore } from '../../../src/notify/mute/silence-store.js';
import { FileStateStore } from '../../../src/state/file-state-store.js';
import { ManualClock } from '../../../src/util/clock.js';
import { hasCode } from '../../../src/util/errors.js';
import { silentLogger } from '../../../src/util/logger.js';

const T0 = Date.parse('2024-03-05T10:00:00Z');

describe('SilenceStore', () => {
  let dir: string;
  let clock: ManualClock;
  let ids: number;
  const newStore = (state: FileStateStore) => new SilenceStore(clock, state, silentLogger(), () => undefined, () => `s${++ids}`);

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tw-silences-'));
    clock = new ManualClock(T0);
    ids = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a silence over max_silence_size_bytes and one over max_silences (a flood of 2,000 stops at the limit)', async () => {
    const state = new FileStateStore(dir, silentLogger(), clock);
    await state.init();
    const store = new SilenceStore(clock, state, silentLogger(), () => undefined, () => `s${++ids}`, { maxSilences: 5, maxSizeBytes: 1_024 });
    const silence = (i: number, comment = 'flood') => ({
      matchers: [{ name: 'user', value: `U${i}`, isRegex: false, isEqual: true }],
      startsAt: new Date(T0).toISOString(),
      endsAt: new Date(T0 + 3_600_000).toISOString(),
      createdBy: 'mallory',
      comment,
    });
    await expect(store.create(silence(0, 'x'.repeat(2_000)))).rejects.toMatchObject({ code: 'silence_too_large' });
    const results = await Promise.allSettled(Array.from({ length: 2_000 }, (_, i) => store.create(silence(i))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'silence_limit')).toBe(true);
    expect(store.list()).toHaveLength(5);
    // Expired silences do not count: expiring one makes room for one.
    await store.expire('s1');
    await expect(store.create(silence(9_999))).resolves.toMatchObject({ status: { state: 'active' } });
  });

  it('creates, matches, lists, expires and persists silences', async () => {
    const state = new FileStateStore(dir, silentLogger(), clock);
    await state.init();
    const store = newStore(state);
    const s = await store.create({
      matchers: ['alertname="DailyStatementMissing"', { name: 'mft_instance', value: 'PROD.*', isRegex: true }],
      endsAt: new Date(T0 + 2 * 3_600_000).toISOString(),
      createdBy: 'ana',
      comment: 'bank holiday',
    });
    expect(s).toMatchObject({
      id: 's1',
      status: { state: 'active' },
      startsAt: '2024-03-05T10:00:00.000Z',
      matchers: [
        { name: 'alertname', value: 'DailyStatementMissing', isRegex: false, isEqual: true },
        { name: 'mft_instance', value: 'PROD.*', isRegex: true, isEqual: true },
      ],
    });
    expect(store.silencedBy({ alertname: 'DailyStatementMissing', mft_instance: 'PROD1' })).toEqual(['s1']);
    expect(store.silencedBy({ alertname: 'DailyStatementMissing', mft_instance: 'DEV1' })).toEqual([]);

    const later = await store.create({
      matchers: ['user!="BANK1"', 'alertname="X"'],
      startsAt: new Date(T0 + 3_600_000).toISOString(),
      endsAt: new Date(T0 + 7_200_000).toISOString(),
      createdBy: 'bo',
      comment: 'later',
    });
    expect(later.status.state).toBe('pending');
    expect(store.silencedBy({ alertname: 'X', user: 'BANK2' })).toEqual([]);

    // A second store on the same directory sees both (the restart case).
    const reopened = newStore(state);
    await reopened.restore();
    expect(reopened.list().map((x) => [x.id, x.status.state])).toEqual([
      ['s1', 'active'],
      ['s2', 'pending'],
    ]);
    clock.advance(3_600_000);
    expect(reopened.silencedBy({ alertname: 'X', user: 'BANK2' })).toEqual(['s2']);

    expect(await reopened.expire('s1')).toBe(true);
    expect(await reopened.expire('nope')).toBe(false);
    expect(reopened.get('s1')?.status.state).toBe('expired');
    expect(reopened.silencedBy({ alertname: 'DailyStatementMissing', mft_instance: 'PROD1' })).toEqual([]);

    const third = newStore(state);
    await third.restore();
    expect(third.get('s1')?.status.state).toBe('expired');
    // Expired silences are forgotten after the retention period.
    clock.advance(6 * 24 * 3_600_000);
    expect(third.list().map((x) => x.id)).toEqual([]);
  });

  it('rejects invalid input with code silence_invalid', async () => {
    const store = newStore(new FileStateStore(dir, silentLogger(), clock));
    const end = new Date(T0 + 3_600_000).toISOString();
    const bad: unknown[] = [
      null,
      { matchers: [], endsAt: end, createdBy: 'a', comment: 'c' },
      { matchers: ['alertname=="x'], endsAt: end, createdBy: 'a', comment: 'c' },
      { matchers: ['alertname=~""'], endsAt: end, createdBy: 'a', comment: 'c' },
      { matchers: ['alertname="x"'], endsAt: new Date(T0 - 1).toISOString(), createdBy: 'a', comment: 'c' },
      { matchers: ['alertname="x"'], endsAt: 'tomorrow', createdBy: 'a', comment: 'c' },
      { matchers: ['alertname="x"'], endsAt: end, createdBy: '', comment: 'c' },
      { matchers: [{ name: 'a', value: '(', isRegex: true }], endsAt: end, createdBy: 'a', comment: 'c' },
    ];
    for (const input of bad) {
      const err = await store.create(input).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(input)).toBeInstanceOf(SilenceError);
      expect(hasCode(err, 'silence_invalid')).toBe(true);
    }
    expect(store.list()).toEqual([]);
  });

  it('updates an existing silence when its id is posted again', async () => {
    const store = newStore(new FileStateStore(dir, silentLogger(), clock));
    const end = new Date(T0 + 3_600_000).toISOString();
    const s = await store.create({ matchers: ['alertname="x"'], endsAt: end, createdBy: 'a', comment: 'c' });
    const u = await store.create({ id: s.id, matchers: ['alertname="y"'], endsAt: end, createdBy: 'a', comment: 'c2' });
    expect(u.id).toBe(s.id);
    expect(store.list()).toHaveLength(1);
    expect(store.silencedBy({ alertname: 'y' })).toEqual([s.id]);
  });

  it('moves a stored silence whose matcher RE2 refuses aside (logged, kept under silences.quarantined) and starts with the rest', async () => {
    const state = new FileStateStore(dir, silentLogger(), clock);
    await state.init();
    const stored = (id: string, value: string) => ({
      id,
      matchers: [{ name: 'user', value, isRegex: true, isEqual: true }],
      startsAt: T0,
      endsAt: T0 + 3_600_000,
      createdBy: 'ops',
      comment: 'maintenance',
      updatedAt: T0,
    });
    // Written by an earlier version, whose backtracking engine took lookaheads.
    await state.save('silences', { version: 1, silences: [stored('good', 'BANK.*'), stored('old', '(?!BANK1).*')] });
    const store = newStore(state);
    await store.restore();
    expect(store.list().map((s) => s.id)).toEqual(['good']);
    expect(store.silencedBy({ user: 'BANK2' })).toEqual(['good']);
    const quarantined = (await state.load('silences.quarantined')) as Array<{ reason: string; silence: { id: string } }>;
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]?.silence.id).toBe('old');
    expect(quarantined[0]?.reason).toMatch(/invalid regular expression "\(\?!BANK1\)\.\*"/);
    // The live state no longer holds it: the next start does not meet it again, and nothing is quarantined twice.
    const again = newStore(state);
    await again.restore();
    expect(again.list().map((s) => s.id)).toEqual(['good']);
    expect(await state.load('silences.quarantined')).toHaveLength(1);
  });

  it('keeps at most 200 expired silences (the newest), so each write does not carry thousands of dead ones', async () => {
    const state = new FileStateStore(dir, silentLogger(), clock);
    await state.init();
    const store = new SilenceStore(clock, state, silentLogger(), () => undefined, () => `s${++ids}`, { maxSilences: 5, maxSizeBytes: 8_192 });
    for (let i = 0; i < 230; i++) {
      const s = await store.create({
        matchers: [{ name: 'user', value: `U${i}`, isRegex: false, isEqual: true }],
        startsAt: new Date(clock.now()).toISOString(),
        endsAt: new Date(clock.now() + 3_600_000).toISOString(),
        createdBy: 'script',
        comment: 'loop',
      });
      await store.expire(s.id);
      clock.advance(1_000);
    }
    const listed = store.list();
    expect(listed).toHaveLength(200);
    expect(listed.some((s) => s.id === 's230')).toBe(true);
    expect(listed.some((s) => s.id === 's1')).toBe(false);
  });
});
