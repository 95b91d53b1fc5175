import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/** Debian's PostgreSQL server binaries (`initdb`, `postgres`): PG_BIN, else the newest /usr/lib/postgresql/N/bin. */
export const PG_BIN = process.env['PG_BIN'] ?? newestPostgresBin();
export const HAVE_POSTGRES = PG_BIN !== undefined && existsSync(join(PG_BIN, 'initdb'));

function newestPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((bin) => existsSync(join(bin, 'initdb')));
}

/** initdb and postgres refuse to run as root: as root, they run as the `postgres` user Debian's package creates. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('running as root and there is no postgres user to run PostgreSQL as (.ci/run installs Debian\'s postgresql, which creates it)');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A real PostgreSQL server for one test file: `initdb` in a temporary directory, `postgres` on a free loopback
 * port, no service manager. Stopped by its pid only (the machine is shared). Superuser `tw`, trust auth on
 * loopback; `createDatabase` gives each test a database of its own.
 */
export class PostgresServer {
  private proc: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly user: { uid: number; gid: number } | undefined,
  ) {}

  static async start(): Promise<PostgresServer> {
    if (!HAVE_POSTGRES || PG_BIN === undefined) throw new Error('PostgreSQL server binaries not found; .ci/run installs Debian\'s postgresql');
    const dir = mkdtempSync(join(tmpdir(), 'tw-pg-'));
    const user = runAs();
    if (user) chownSync(dir, user.uid, user.gid);
    const init = spawnSync(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'tw', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
      ...(user ?? {}),
      encoding: 'utf8',
    });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const server = new PostgresServer(await freePort(), dir, user);
    await server.restart();
    return server;
  }

  url(database = 'postgres'): string {
    return `postgres://tw@127.0.0.1:${this.port}/${database}`;
  }

  /** Start it (again) on the same port with the same data. */
  async restart(): Promise<void> {
    if (PG_BIN === undefined) throw new Error('no PostgreSQL');
    this.proc = spawn(
      join(PG_BIN, 'postgres'),
      ['-D', join(this.dir, 'data'), '-p', String(this.port), '-k', this.dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=50'],
      { ...(this.user ?? {}), stdio: 'ignore' },
    );
    const deadline = Date.now() + 20_000;
    for (;;) {
      const client = new pg.Client({ connectionString: this.url() });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`postgres did not start on port ${this.port}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** A new empty database; its URL. */
  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /**
   * A login role that must give its password (SCRAM on loopback, where every other user is trusted), owning
   * `database`: what a deployment's `history.postgres` with a user and a password meets.
   */
  async requirePassword(role: string, password: string, database: string): Promise<void> {
    const hba = join(this.dir, 'data', 'pg_hba.conf');
    writeFileSync(hba, `host all ${role} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE ROLE "${role.replace(/"/g, '')}" LOGIN PASSWORD '${password.replace(/'/g, "''")}'`);
      await client.query(`ALTER DATABASE "${database.replace(/"/g, '')}" OWNER TO "${role.replace(/"/g, '')}"`);
      await client.query('SELECT pg_reload_conf()');
    } finally {
      await client.end();
    }
  }

  /** Down at once (SIGQUIT: the immediate shutdown, its backends end with it), the data kept for `restart`. */
  async kill(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGQUIT');
    await exited;
  }

  /**
   * Stop it and delete its data. The server this object started is ended by its pid; if a test lost track of it
   * (it failed between a kill and a restart), the pid the server wrote in its data directory is ended too.
   */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      await exited;
    }
    const pidFile = join(this.dir, 'data', 'postmaster.pid');
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      if (Number.isInteger(pid) && pid > 0) {
        try {
          process.kill(pid, 'SIGINT');
          for (let i = 0; i < 100; i++) {
            process.kill(pid, 0);
            await new Promise((r) => setTimeout(r, 50));
          }
        } catch {
          /* gone (or never there) */
        }
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
