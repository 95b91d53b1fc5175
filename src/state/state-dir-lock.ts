import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { TransferWatchError } from '../util/errors.js';

/** What a lock file says: who holds the state directory. */
interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

/**
 * One process per state directory (without `ha:`): two daemons on one `state.dir` would both poll and both
 * notify, and overwrite each other's files. The lock is a file created exclusively; a lock left by a process
 * that is gone (same host, pid not running) is taken over. Released at exit.
 */
export class StateDirLock {
  private constructor(private readonly file: string) {}

  static acquire(dir: string): StateDirLock {
    const file = path.join(dir, 'transfer-watch.lock');
    const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        writeSync(fd, `${JSON.stringify(me)}\n`);
        closeSync(fd);
        return new StateDirLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = readOwner(file);
      // Our own pid in the file: a previous life of this container (pid 1 again) that was killed.
      if (owner && owner.host === me.host && (owner.pid === process.pid || !alive(owner.pid))) {
        unlinkSync(file);
        continue;
      }
      const who = owner ? `process ${owner.pid} on ${owner.host} (started ${owner.startedAt})` : 'another process';
      throw new TransferWatchError(
        'state_dir_locked',
        `state.dir ${dir} is in use by ${who}; run one process per state directory, or configure ha: to run several replicas on Redis (remove ${file} if that process is gone)`,
      );
    }
    throw new TransferWatchError('state_dir_locked', `cannot lock state.dir ${dir}`);
  }

  release(): void {
    try {
      const owner = readOwner(this.file);
      if (owner?.pid === process.pid) unlinkSync(this.file);
    } catch {
      /* gone already */
    }
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof raw === 'object' && raw !== null && 'pid' in raw && typeof raw.pid === 'number') {
      const host = 'host' in raw && typeof raw.host === 'string' ? raw.host : '';
      const startedAt = 'startedAt' in raw && typeof raw.startedAt === 'string' ? raw.startedAt : '';
      return { pid: raw.pid, host, startedAt };
    }
  } catch {
    /* unreadable: treated as held by an unknown process */
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
