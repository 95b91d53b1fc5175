import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from './free-port.js';

export const REDIS_SERVER = process.env['REDIS_SERVER_BIN'] ?? '/usr/bin/redis-server';
export const HAVE_REDIS = existsSync(REDIS_SERVER);

/**
 * A real redis-server (Debian's) on a free port, without persistence: a restart comes back empty, as the HA
 * tests want it. Stopped by its pid only (the machine is shared).
 */
export class RedisServer {
  private proc: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly extraArgs: string[] = [],
  ) {}

  /** `requirepass`: the server refuses clients without that password. */
  static async start(opts: { requirepass?: string } = {}): Promise<RedisServer> {
    if (!HAVE_REDIS) throw new Error(`${REDIS_SERVER} not found; .ci/run installs redis-server`);
    const server = new RedisServer(await freePort(), opts.requirepass ? ['--requirepass', opts.requirepass] : []);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Start it (again, empty) on the same port. */
  async restart(): Promise<void> {
    this.proc = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', ...this.extraArgs], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** kill -9 (Redis gone without warning). */
  async kill(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await exited;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
