import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStateStore } from '../../src/state/file-state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

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

describe('FileStateStore under kill -9', () => {
  const dirs: string[] = [];
  afterEach(() => {
    disk.release();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a saved value is in place under its name while the fsyncs are still pending (a killed process loses nothing)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-state-kill-'));
    dirs.push(dir);
    const store = new FileStateStore(dir, silentLogger(), new ManualClock(0));
    await store.init();
    await store.save('nflog', { seq: 1 });

    disk.stall();
    let done = false;
    const saving = store.save('nflog', { seq: 2 }).then(() => (done = true));
    // What a process started after a kill -9 at this moment would read: the new value, not the old one.
    await vi.waitFor(() => expect(JSON.parse(readFileSync(join(dir, 'nflog.json'), 'utf8'))).toEqual({ seq: 2 }));
    expect(done).toBe(false);
    disk.release();
    await saving;
    expect(done).toBe(true);
    expect(store.lastWriteOk).toBe(true);
  });
});
