import { Worker } from 'node:worker_threads';
import { CompiledQuery, SqliteAdapter, SqliteDialect, type DatabaseConnection, type DialectAdapter, type Driver, type QueryResult } from 'kysely';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { reassertHeapSettings } from '../util/heap-growth.js';
import type { SqliteWorkerData, SqliteWorkerError, SqliteWorkerReply, SqliteWorkerRequest } from './sqlite-worker.js';
import type { MovedAside } from './sqlite-file.js';

export interface WorkerSqliteOptions {
  file: string;
  /** Called after each opening of the file (the first, and after a worker that died): a corrupt file moved aside. */
  onOpen?(opened: { movedAside?: MovedAside }): void;
  /**
   * A statement running longer fails, and its thread is left to end when it returns: SQLite cannot be interrupted
   * from outside its thread (not even by terminating it: a native call runs to its end), so the next statement
   * runs on a new thread instead of queueing behind it.
   */
  statementTimeoutMs?: number;
}

/**
 * As PostgreSQL's statement_timeout (25 s) for the same store, with room for a migration's index on a large table:
 * the event loop does not wait for a statement any more, but every other statement would queue behind a runaway one.
 */
const STATEMENT_TIMEOUT_MS = 60_000;

/**
 * Kysely's SQLite dialect (its SQL, adapter, introspection) with the statements run on a worker thread
 * (sqlite-worker.ts) instead of the daemon's event loop. One connection, as SQLite has one writer: statements and
 * transactions are serialised by a mutex, as in Kysely's own SQLite driver.
 */
export class WorkerSqliteDialect extends SqliteDialect {
  readonly #options: WorkerSqliteOptions;
  #driver: WorkerSqliteDriver | undefined;

  constructor(options: WorkerSqliteOptions) {
    // The synchronous database the parent class would drive is never made: createDriver is ours.
    super({ database: () => Promise.reject(new Error('not used')) });
    this.#options = options;
  }

  /**
   * SQLite's DDL is transactional, but Kysely's adapter says not, so its migrator ran each migration's statements
   * unguarded: a daemon killed inside a migration left a table made and the migration unrecorded, and every later
   * start failed on "table … already exists". Said so, the migrator runs all pending migrations in one transaction.
   */
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }

  override createDriver(): Driver {
    this.#driver = new WorkerSqliteDriver(this.#options);
    return this.#driver;
  }

  /** Close the file and open the one at its path at the next statement (the file was deleted or replaced). */
  async reopen(): Promise<void> {
    await this.#driver?.reopen();
  }

  /**
   * `PRAGMA quick_check` on the store's thread, between two holders of the connection (contract 12a): what it found
   * wrong (none: sound). A damaged file is replaced at once by its newest good backup (onOpen says so).
   */
  async integrityCheck(): Promise<string[]> {
    if (!this.#driver) throw new TransferWatchError('history_not_open', 'the history database is not open yet');
    return this.#driver.integrityCheck();
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** An error the worker sent back, as an Error with the driver's codes (the store classifies by them). */
class SqliteStatementError extends Error {
  readonly code: string | undefined;
  readonly errcode: number | undefined;
  constructor(e: SqliteWorkerError) {
    super(e.message);
    this.name = e.name;
    this.code = e.code;
    this.errcode = e.errcode;
  }
}

class WorkerSqliteDriver implements Driver {
  readonly #options: WorkerSqliteOptions;
  readonly #mutex = new ConnectionMutex();
  #worker: Worker | undefined;
  #opening: Promise<Worker> | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve(reply: SqliteWorkerReply & { ok: true }): void; reject(err: Error): void }>();
  #inTransaction = false;
  /** The worker died inside a transaction: its statements are gone; the rest of it must fail, not autocommit. */
  #transactionLost = false;
  readonly #connection: DatabaseConnection;
  /** Threads whose end was handled (their statements failed, their transaction lost). */
  readonly #ended = new WeakSet<Worker>();

  constructor(options: WorkerSqliteOptions) {
    this.#options = options;
    this.#connection = {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> => this.#execute<R>(query),
      streamQuery: () => {
        throw new TransferWatchError('history_stream', 'streaming is not supported by the history store');
      },
    };
  }

  async init(): Promise<void> {
    await this.#ready();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
    this.#inTransaction = true;
    this.#transactionLost = false;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('commit'));
    } finally {
      this.#inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      // Nothing to roll back on a new worker: the transaction went with the one that died.
      if (!this.#transactionLost) await connection.executeQuery(CompiledQuery.raw('rollback'));
    } catch (err) {
      // SQLite rolls a transaction back itself on some errors (a full disk, an I/O error): the ROLLBACK after them
      // fails, and its "cannot rollback - no transaction is active" took the place of the error that said why
      // (issue 53). That one goes on to the caller instead.
      if (!/no transaction is active/.test(errorMessage(err))) throw err;
    } finally {
      this.#inTransaction = false;
      this.#transactionLost = false;
    }
  }

  releaseConnection(): Promise<void> {
    this.#mutex.unlock();
    return Promise.resolve();
  }

  async integrityCheck(): Promise<string[]> {
    await this.#mutex.lock();
    try {
      const reply = await this.#send(await this.#ready(), { id: 0, op: 'check' });
      if (reply.movedAside) this.#options.onOpen?.({ movedAside: reply.movedAside });
      return reply.problems ?? [];
    } finally {
      this.#mutex.unlock();
    }
  }

  /** Between two holders of the connection (never inside a transaction): close this thread's file; the next opens it anew. */
  async reopen(): Promise<void> {
    await this.#mutex.lock();
    try {
      await this.destroy();
    } finally {
      this.#mutex.unlock();
    }
  }

  async destroy(): Promise<void> {
    const worker = this.#worker ?? (await this.#opening?.catch(() => undefined));
    this.#worker = undefined;
    this.#opening = undefined;
    if (!worker) return;
    await this.#send(worker, { id: 0, op: 'close' }).catch(() => undefined);
    await worker.terminate();
  }

  async #execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#transactionLost) throw new TransferWatchError('history_worker_gone', 'the history database thread ended inside a transaction; it was not written');
    const worker = await this.#ready();
    const reply = await this.#send(worker, { id: 0, op: 'query', sql: query.sql, parameters: query.parameters });
    return {
      rows: (reply.rows ?? []) as R[],
      ...(reply.numAffectedRows !== undefined ? { numAffectedRows: reply.numAffectedRows } : {}),
      ...(reply.insertId !== undefined ? { insertId: reply.insertId } : {}),
    };
  }

  /** The running worker, started (and the file opened) at the first statement or after one that died. */
  #ready(): Promise<Worker> {
    if (this.#worker) return Promise.resolve(this.#worker);
    this.#opening ??= this.#start().then(
      (worker) => {
        this.#worker = worker;
        this.#opening = undefined;
        return worker;
      },
      (err: unknown) => {
        this.#opening = undefined;
        throw err;
      },
    );
    return this.#opening;
  }

  async #start(): Promise<Worker> {
    const worker = spawnSqliteWorker({ file: this.#options.file });
    worker.unref();
    worker.on('message', (reply: SqliteWorkerReply) => {
      const waiting = this.#pending.get(reply.id);
      if (!waiting) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if (reply.ok) waiting.resolve(reply);
      else {
        if (reply.movedAside) {
          // A new, empty file: what the transaction wrote before went aside with the old one.
          if (this.#inTransaction) this.#transactionLost = true;
          this.#options.onOpen?.({ movedAside: reply.movedAside });
        }
        waiting.reject(new SqliteStatementError(reply.error));
      }
    });
    const gone = (why: string): void => this.#end(worker, new TransferWatchError('history_worker_gone', `the history database thread ended (${why}); the statement was not run`));
    worker.on('error', (err) => gone(err.message));
    worker.on('exit', (code) => gone(`exit code ${code}`));
    try {
      const reply = await this.#send(worker, { id: 0, op: 'open' });
      this.#options.onOpen?.(reply.movedAside ? { movedAside: reply.movedAside } : {});
      return worker;
    } catch (err) {
      await worker.terminate();
      throw err;
    }
  }

  /**
   * A thread given up: its statements fail with `err`, a transaction it was in is lost. Once per thread — one left
   * behind over the time limit ends later, while its successor may be in a transaction.
   */
  #end(worker: Worker, err: Error): void {
    if (this.#ended.has(worker)) return;
    this.#ended.add(worker);
    if (this.#worker === worker) this.#worker = undefined;
    if (this.#inTransaction) this.#transactionLost = true;
    for (const [id, waiting] of this.#pending) {
      this.#pending.delete(id);
      waiting.reject(err);
    }
  }

  #send(worker: Worker, request: SqliteWorkerRequest): Promise<SqliteWorkerReply & { ok: true }> {
    const id = this.#nextId++;
    const answered = new Promise<SqliteWorkerReply & { ok: true }>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Kept alive while a statement is out: a daemon awaiting its answer must not exit under it.
      worker.ref();
      worker.postMessage({ ...request, id });
    });
    if (request.op !== 'query') return answered;
    // A runaway statement fails and its thread is given up (it ends when the statement returns); the next statement
    // starts another.
    const limitMs = this.#options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
    const timer = setTimeout(() => {
      this.#end(worker, new TransferWatchError('history_statement_timeout', `a history statement ran longer than ${limitMs / 1000} s and was given up`));
      worker.unref();
      void worker.terminate();
    }, limitMs);
    timer.unref();
    return answered.finally(() => clearTimeout(timer));
  }
}

/**
 * The worker's script next to this module: `sqlite-worker.js` in the build. From the TypeScript sources (the tests,
 * `tsx`), the `.ts` file, through tsx's loader registered in the new thread first (loaders are per thread, and a
 * worker's `--import` is not applied under a test runner's own workers).
 */
function spawnSqliteWorker(data: SqliteWorkerData): Worker {
  // A small young generation: the thread's garbage is results copied out, collected often rather than let grow
  // (the daemon's resident memory under looping reports, issue 43).
  const resourceLimits = { maxYoungGenerationSizeMb: 4 };
  let worker: Worker;
  if (!import.meta.url.endsWith('.ts')) worker = new Worker(new URL('./sqlite-worker.js', import.meta.url), { workerData: data, resourceLimits });
  else {
    const script = new URL('./sqlite-worker.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(script)}); });`;
    worker = new Worker(boot, { eval: true, workerData: data, resourceLimits });
  }
  // Node 20 resets V8's flags while a thread starts: the CLI's heap settings are set again once it has.
  worker.once('online', () => reassertHeapSettings());
  return worker;
}

/** One holder of the connection at a time (Kysely's SqliteDriver does the same). */
class ConnectionMutex {
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  async lock(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  unlock(): void {
    const release = this.#release;
    this.#held = undefined;
    this.#release = undefined;
    release?.();
  }
}
