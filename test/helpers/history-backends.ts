import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHistoryDatabase } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { HistoryStore } from '../../src/history/history-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { HAVE_POSTGRES, PostgresServer } from './postgres-server.js';

if (!HAVE_POSTGRES && process.env['CI'] === 'true') throw new Error('PostgreSQL server binaries not found; .ci/run installs postgresql');

export type Backend = 'sqlite' | 'postgres';
/**
 * The stores every history test runs against (PostgreSQL where its binaries are, always in CI).
 * `TW_HISTORY_BACKENDS=sqlite` narrows them: CI's second runtime (Node 24) runs the SQLite half only, as its SQLite
 * driver is another (node:sqlite) while PostgreSQL's client is the same JavaScript on both.
 */
const NARROWED = process.env['TW_HISTORY_BACKENDS']?.split(',').map((b) => b.trim());
export const BACKENDS: Backend[] = (HAVE_POSTGRES ? (['sqlite', 'postgres'] as Backend[]) : (['sqlite'] as Backend[])).filter((b) => NARROWED === undefined || NARROWED.includes(b));

/**
 * Fresh history stores of one backend for one test file: a SQLite file in a temporary state directory, or a new
 * database on one PostgreSQL server started for the file. `close()` ends what was opened.
 */
export class HistoryBackend {
  private server: PostgresServer | undefined;
  /** The one start of the server, however many tests ask for a store at once (two starts leaked one). */
  private starting: Promise<PostgresServer> | undefined;
  private readonly dirs: string[] = [];
  private readonly stores: HistoryStore[] = [];
  private n = 0;

  constructor(readonly kind: Backend) {}

  /** The `history:` config of a fresh store, and the state dir a SQLite one lives in. */
  async config(): Promise<{ history: Record<string, unknown>; stateDir: string; postgres?: PostgresServer }> {
    const stateDir = mkdtempSync(join(tmpdir(), 'tw-history-'));
    this.dirs.push(stateDir);
    if (this.kind === 'sqlite') return { history: {}, stateDir };
    this.starting ??= PostgresServer.start();
    const server = (this.server = await this.starting);
    const url = await server.createDatabase(`tw_${process.pid}_${++this.n}`);
    return { history: { postgres: { url } }, stateDir, postgres: server };
  }

  async open(): Promise<HistoryStore> {
    const { history, stateDir } = await this.config();
    const store = new HistoryStore(openHistoryDatabase(historySchema.parse(history), stateDir, silentLogger()));
    await store.ensureSchema();
    this.stores.push(store);
    return store;
  }

  get postgres(): PostgresServer | undefined {
    return this.server;
  }

  async close(): Promise<void> {
    for (const s of this.stores) await s.close().catch(() => undefined);
    await (await this.starting?.catch(() => undefined))?.stop();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}
