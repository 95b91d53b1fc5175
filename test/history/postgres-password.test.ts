import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateHistory, openHistoryDatabase, withPassword } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { silentLogger } from '../../src/util/logger.js';
import { HAVE_POSTGRES, PostgresServer } from '../helpers/postgres-server.js';

const PASSWORD = 'p@ss w0rd!%:/';

describe('history.postgres.password with the user in the URL', () => {
  it('puts the password into a URL that names a user without one, and leaves any other URL as it is', () => {
    const url = withPassword('postgres://tw@db.example:5432/tw?sslmode=require', PASSWORD);
    const parsed = new URL(url);
    expect(parsed.username).toBe('tw');
    expect(decodeURIComponent(parsed.password)).toBe(PASSWORD);
    expect(parsed.search).toBe('?sslmode=require');
    expect(withPassword('postgres://tw:inurl@db/tw', PASSWORD)).toBe('postgres://tw:inurl@db/tw');
    expect(withPassword('postgres://db/tw', PASSWORD)).toBe('postgres://db/tw');
    expect(withPassword('postgres://tw@db/tw', undefined)).toBe('postgres://tw@db/tw');
    expect(withPassword('host=db user=tw', PASSWORD)).toBe('host=db user=tw');
  });

  const servers: PostgresServer[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.skipIf(!HAVE_POSTGRES)('connects to a real PostgreSQL that asks for the password (SCRAM), as documented; a wrong one is refused without being shown', async () => {
    const server = await PostgresServer.start();
    servers.push(server);
    await server.createDatabase('tw_pw');
    await server.requirePassword('tw_app', PASSWORD, 'tw_pw');
    const url = `postgres://tw_app@127.0.0.1:${server.port}/tw_pw`;
    const dir = mkdtempSync(join(tmpdir(), 'tw-pg-pw-'));
    dirs.push(dir);

    const good = openHistoryDatabase(historySchema.parse({ postgres: { url, password: PASSWORD } }), dir, silentLogger());
    try {
      await migrateHistory(good.db);
    } finally {
      await good.close();
    }

    const wrong = openHistoryDatabase(historySchema.parse({ postgres: { url, password: 'not-the-password' } }), dir, silentLogger());
    try {
      const err = await migrateHistory(wrong.db).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(err)).toMatch(/password authentication failed/);
      expect(wrong.redact(String(err))).not.toContain('not-the-password');
    } finally {
      await wrong.close();
    }
  }, 60_000);
});
