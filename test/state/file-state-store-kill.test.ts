import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { Notifier } from '../../src/notify/notifier.js';
import { FileStateStore } from '../../src/state/file-state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { FakeIntegration, firing, notifyConfig } from '../notify/helpers.js';

/** fsyncs that hang until released: a busy disk, on which a kill -9 may land mid-write. */
const disk = vi.hoisted(() => {
  let release: () => void = () => undefined;
  let stalled = false;
  return {
    stall(): void {
      stalled = true;
    },
    release(): void {
      stalled = false;
      release();
    },
    sync(): Promise<void> {
      return stalled ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
    },
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const open = async (...args: Parameters<typeof actual.open>): Promise<FileHandle> => {
    const handle = await actual.open(...args);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'sync') return () => disk.sync().then(() => target.sync());
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return { ...actual, open, default: { ...actual, open } };
});

const T0 = Date.parse('2024-03-05T12:00:00Z');

function config(): Config {
  return notifyConfig({
    receivers: [{ name: 'ops', console: {} }],
    route: { receiver: 'ops', group_by: ['alertname'], group_wait: '30s', group_interval: '5m', repeat_interval: '4h' },
  });
}

function journalLines(dir: string): unknown[] {
  const file = join(dir, 'nflog.journal');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

describe('FileStateStore under kill -9 and power loss', () => {
  const dirs: string[] = [];
  const stores: FileStateStore[] = [];
  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'tw-state-kill-'));
    dirs.push(dir);
    return dir;
  }
  async function store(dir: string, clock = new ManualClock(0)): Promise<FileStateStore> {
    const s = new FileStateStore(dir, silentLogger(), clock);
    await s.init();
    stores.push(s);
    return s;
  }
  afterEach(async () => {
    disk.release();
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a snapshot takes its name only after its fsync, while a journal record is in the file as soon as append is called', async () => {
    const dir = tempDir();
    const s = await store(dir);
    await s.save('nflog', { seq: 1 });

    disk.stall();
    let done = false;
    const saving = s.save('nflog', { seq: 2 }).then(() => (done = true));
    // The new snapshot is written to its temp file and waits for its fsync...
    await vi.waitFor(() => expect(readdirSync(dir).some((n) => n.startsWith('nflog.json.tmp-'))).toBe(true));
    // ...and until then the name still holds the old one, whole (a power loss now cannot leave it empty).
    expect(JSON.parse(readFileSync(join(dir, 'nflog.json'), 'utf8'))).toEqual({ seq: 1 });

    // An append during that write needs no disk round trip: it is in the file before append returns.
    void s.append('nflog', { seq: 3 });
    expect(journalLines(dir)).toEqual([{ seq: 3 }]);
    expect(done).toBe(false);

    disk.release();
    await saving;
    expect(s.lastWriteOk).toBe(true);
    expect(await s.load('nflog')).toEqual({ seq: 2 });
    // The record appended after the save was called is not covered by that snapshot and stays.
    expect(await s.journal('nflog')).toEqual([{ seq: 3 }]);
  });

  it('a kill -9 right after a delivery, while the outbox removal waits for a slow disk, sends nothing twice', async () => {
    const dir = tempDir();
    const clock = new ManualClock(T0);
    const burst = firing({ alertname: 'Burst', mft_instance: 'PROD1' }, T0);
    const first = new FakeIntegration();
    const notifier = new Notifier({ config: config(), clock, logger: silentLogger(), state: await store(dir, clock), random: () => 0.5, integrationsFor: () => [first] });
    await notifier.restore();
    notifier.update([burst]);
    clock.set(T0 + 30_000);

    // The receiver accepts the message, and from then on the disk is slow: every fsync hangs.
    let atNextTurn: unknown[] | undefined;
    const send = first.send.bind(first);
    first.send = (n) =>
      send(n).then(() => {
        disk.stall();
        // The first moment another event could run (a SIGKILL being delivered, say): no I/O has completed since.
        setImmediate(() => (atNextTurn = journalLines(dir)));
      });
    const ticking = notifier.tick();
    await vi.waitFor(() => expect(atNextTurn).toBeDefined());
    expect(first.sent).toHaveLength(1);
    expect(atNextTurn).toEqual([{ set: { 'ops/webhook/{}:{alertname="Burst"}': { firing: [burst.fingerprint], resolved: [], sentAt: T0 + 30_000, seq: 1 } } }]);
    // Still inside the old window: the outbox on disk lists the delivered notification as pending.
    expect(JSON.parse(readFileSync(join(dir, 'outbox.json'), 'utf8'))).toMatchObject({ entries: [{ id: 1 }] });

    // kill -9 now: a new process starts from the files exactly as they are.
    const after = tempDir();
    cpSync(dir, after, { recursive: true });
    disk.release();
    await ticking;

    const second = new FakeIntegration();
    const restarted = new Notifier({ config: config(), clock, logger: silentLogger(), state: await store(after, clock), random: () => 0.5, integrationsFor: () => [second] });
    await restarted.restore();
    expect(restarted.queueLength).toBe(0);
    restarted.update([burst]);
    await restarted.tick();
    clock.advance(10 * 60_000);
    await restarted.tick();
    expect(second.sent).toHaveLength(0);
  });
});
