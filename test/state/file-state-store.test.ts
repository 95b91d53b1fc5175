import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStateStore } from '../../src/state/file-state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

describe('FileStateStore', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a burst of saves of one key shares writes: the newest value lands, every caller resolves, few fsync rounds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-state-'));
    dirs.push(dir);
    const store = new FileStateStore(dir, silentLogger(), new ManualClock(0));
    await store.init();
    // Count the real writes (each one is a temp file, fsync, rename, fsync of the folder).
    const internals = store as unknown as { write: (key: string, value: unknown) => Promise<void> };
    const write = internals.write.bind(store);
    let writes = 0;
    internals.write = (key, value) => {
      writes++;
      return write(key, value);
    };
    const saves = Array.from({ length: 20 }, (_, i) => store.save('nflog', { seq: i }));
    await Promise.all(saves);
    expect(JSON.parse(readFileSync(join(dir, 'nflog.json'), 'utf8'))).toEqual({ seq: 19 });
    // Saves queued behind a write not yet started share it (20 writes without coalescing).
    expect(writes).toBeLessThanOrEqual(2);
    expect(await store.load('nflog')).toEqual({ seq: 19 });
  });
});
