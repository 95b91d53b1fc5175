import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { SqliteDatabase } from 'kysely';
import { loadConfig } from '../config/load-config.js';
import { SQLITE_FILE } from '../history/history-database.js';
import { backupName, backupsDirOf, integrityProblems, listBackups, openSqliteFile } from '../history/sqlite-file.js';
import { RESTORED_MARKER } from '../daemon/roles/history-care.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch history check|backup|restore --config FILE` (contract 12a): what the daemon does to its SQLite history
 * (`state.dir/history.sqlite`), by hand. `check` runs `quick_check` and lists the backups; `backup` writes a verified
 * one (it can run beside the daemon: SQLite reads a consistent snapshot); `restore` — with the daemon stopped — moves
 * the file aside and puts the newest good backup (or `--from FILE`) in its place, and the next start judges the SLA
 * ledger since that backup again from the service history. PostgreSQL keeps its own durability (pg_dump, PITR).
 */
export function registerHistoryFile(history: Command): void {
  history
    .command('check')
    .description('check the SQLite history file (quick_check) and list its backups')
    .requiredOption('-c, --config <file>', 'the daemon\'s configuration file')
    .action(async (o: { config: string }) => run(async () => check(await historyFile(o.config))));
  history
    .command('backup')
    .description('write a verified backup of the SQLite history into state.dir/backups/ (the daemon may run)')
    .requiredOption('-c, --config <file>', 'the daemon\'s configuration file')
    .action(async (o: { config: string }) => run(async () => backup(await historyFile(o.config))));
  history
    .command('restore')
    .description('with the daemon stopped: put the newest good backup (or --from FILE) in place of the SQLite history; the next start judges the ledger since it again')
    .requiredOption('-c, --config <file>', 'the daemon\'s configuration file')
    .option('--from <file>', 'the backup to restore (default: the newest one that passes quick_check)')
    .action(async (o: { config: string; from?: string }) => run(async () => restore(await historyFile(o.config), o.from)));
}

async function run(action: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await action();
  } catch (err) {
    process.stderr.write(`history: ${errorMessage(err)}\n`);
    process.exitCode = err instanceof TransferWatchError && err.code === 'history_damaged' ? EXIT_FAILURE : EXIT_USAGE;
  }
}

/** The SQLite history file of a configuration, and its backups' settings. */
async function historyFile(configFile: string): Promise<{ file: string; keep: number }> {
  const { config } = await loadConfig(configFile, { allowMissingEnv: true });
  if (config.history.postgres) throw new TransferWatchError('history_postgres', 'the history is in PostgreSQL (history.postgres): back it up and restore it with PostgreSQL\'s own tools (pg_dump, point-in-time recovery; docs/history.md)');
  if (!config.history.enabled) throw new TransferWatchError('history_disabled', 'history.enabled is false: there is no history file');
  return { file: join(config.state.dir, SQLITE_FILE), keep: config.history.backup.keep };
}

async function withFile<T>(file: string, use: (db: SqliteDatabase) => T): Promise<T> {
  const db = await openSqliteFile(file);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

async function check({ file }: { file: string }): Promise<number> {
  if (!existsSync(file)) throw new TransferWatchError('history_missing', `no history file at ${file}`);
  let problems: string[];
  try {
    problems = await withFile(file, integrityProblems);
  } catch (err) {
    problems = [errorMessage(err)];
  }
  const out: string[] = [problems.length === 0 ? `ok: ${file} passes quick_check (${statSync(file).size} bytes)` : `DAMAGED: ${file}:\n${problems.slice(0, 20).map((p) => `  ${p}`).join('\n')}`];
  const backups = listBackups(backupsDirOf(file));
  out.push(backups.length === 0 ? 'no backup in backups/' : `backups (newest first):\n${backups.map((b) => `  ${new Date(b.at).toISOString()}  ${b.file}`).join('\n')}`);
  process.stdout.write(`${out.join('\n')}\n`);
  return problems.length === 0 ? EXIT_OK : EXIT_FAILURE;
}

async function backup({ file, keep }: { file: string; keep: number }): Promise<number> {
  if (!existsSync(file)) throw new TransferWatchError('history_missing', `no history file at ${file}`);
  const dir = backupsDirOf(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, backupName(Date.now()));
  const partial = `${target}.partial`;
  await withFile(file, (db) => db.prepare('VACUUM INTO ?').run([partial]));
  const problems = await withFile(partial, integrityProblems).catch((err: unknown) => [errorMessage(err)]);
  if (problems.length > 0) {
    rmSync(partial, { force: true });
    throw new TransferWatchError('history_damaged', `the backup does not pass quick_check (${problems.slice(0, 3).join('; ')}): is ${file} damaged? (transfer-watch history check)`);
  }
  chmodSync(partial, 0o600);
  renameSync(partial, target);
  for (const old of listBackups(dir).slice(keep)) rmSync(old.file, { force: true });
  process.stdout.write(`backed up to ${target} (${statSync(target).size} bytes, verified)\n`);
  return EXIT_OK;
}

async function restore({ file }: { file: string }, from: string | undefined): Promise<number> {
  const candidates = from !== undefined ? [{ file: from, at: statSync(from).mtimeMs }] : listBackups(backupsDirOf(file));
  if (candidates.length === 0) throw new TransferWatchError('history_no_backup', `no backup in ${backupsDirOf(file)} to restore`);
  let chosen: { file: string; at: number } | undefined;
  for (const c of candidates) {
    const problems = await withFile(c.file, integrityProblems).catch((err: unknown) => [errorMessage(err)]);
    if (problems.length === 0) {
      chosen = c;
      break;
    }
    process.stderr.write(`history: ${c.file} does not pass quick_check (${problems[0] ?? ''}); ${from === undefined ? 'trying an older one' : 'not restored'}\n`);
  }
  if (!chosen) throw new TransferWatchError('history_damaged', 'no backup passes quick_check: nothing restored');
  const aside = `${file}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  if (existsSync(file)) renameSync(file, aside);
  for (const f of [`${file}-wal`, `${file}-shm`]) if (existsSync(f)) renameSync(f, `${aside}${f.slice(file.length)}`);
  copyFileSync(chosen.file, file);
  chmodSync(file, 0o600);
  // The next start judges the ledger since the backup again from the service history, as after a damage found running.
  writeFileSync(join(backupsDirOf(file), '..', RESTORED_MARKER), JSON.stringify({ backup: chosen.file, backup_taken_at: chosen.at, restored_at: Date.now(), moved_to: aside }), { mode: 0o600 });
  process.stdout.write(
    `restored ${chosen.file} (taken ${new Date(chosen.at).toISOString()}) to ${file}; the file before is kept as ${aside}.\n` +
      'The next start of the daemon judges the SLA ledger since the backup again from the service history; the alert and notification history since then is lost but for what the state store journal still holds.\n',
  );
  return EXIT_OK;
}
