import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
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

  it.skipIf(!HAVE_POSTGRES)('a server that dies between two statements of a transaction fails that write, and does not end the process', async () => {
    const server = await PostgresServer.start();
    servers.push(server);
    const url = await server.createDatabase('tw_dies');
    const dir = mkdtempSync(join(tmpdir(), 'tw-pg-dies-'));
    dirs.push(dir);
    const opened = openHistoryDatabase(historySchema.parse({ postgres: { url } }), dir, silentLogger());
    try {
      await migrateHistory(opened.db);
      const write = opened.db.transaction().execute(async (tx) => {
        await sql`select 1`.execute(tx);
        // The connection is checked out and idle in the transaction when the server goes away.
        await server.kill();
        await new Promise((r) => setTimeout(r, 500));
        await sql`select 1`.execute(tx);
      });
      await expect(write).rejects.toThrow();
      // (an 'error' event of the checked-out connection without a listener would be an uncaught exception here)
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await opened.close().catch(() => undefined);
      await server.restart();
    }
  }, 60_000);
});

