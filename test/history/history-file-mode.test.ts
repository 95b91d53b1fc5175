import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrateHistory, openHistoryDatabase, SQLITE_FILE } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { silentLogger } from '../../src/util/logger.js';

describe('the embedded history file', () => {
  it('is private (0600) like every other state file, its WAL too, and an older 0644 file is narrowed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-history-mode-'));
    const old = mkdtempSync(join(tmpdir(), 'tw-history-mode-old-'));
    try {
      for (const stateDir of [dir, old]) {
        if (stateDir === old) writeFileSync(join(old, SQLITE_FILE), '', { mode: 0o644 });
        const opened = openHistoryDatabase(historySchema.parse({}), stateDir, silentLogger());
        await migrateHistory(opened.db);
        for (const f of [SQLITE_FILE, `${SQLITE_FILE}-wal`]) expect((statSync(join(stateDir, f)).mode & 0o777).toString(8), `${stateDir}/${f}`).toBe('600');
        await opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(old, { recursive: true, force: true });
    }
  });
});
