import type { Command } from 'commander';
import { systemClock } from '../util/clock.js';
import { createLogger, type Logger } from '../util/logger.js';
import { errorFields } from '../util/errors.js';
import { Daemon } from '../daemon/daemon.js';
import { loadSetup } from '../daemon/load-setup.js';
import { reportStartupError } from './report-startup-error.js';
import { packageVersion } from './package-version.js';
import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** SIGTERM must end the process within 10 s (contract section 1), whatever a stage is waiting for. */
const HARD_EXIT_MS = 9_500;

/**
 * Run a daemon until SIGTERM/SIGINT; SIGHUP reloads. Shared by `run` and `demo`.
 * Resolves never: the process exits from the signal handlers.
 */
export async function runDaemon(daemon: Daemon, logger: Logger): Promise<void> {
  // Handlers are installed before start-up: rebuilding rule windows from history can take a while, and a
  // signal arriving then must not take Node's default action (SIGHUP and SIGTERM would kill the process
  // without flushing state).
  let started = false;
  let stopping = false;
  let reloadWhenStarted = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing the poll cycle in flight and flushing state');
    const hard = setTimeout(() => {
      logger.error('shutdown took too long; exiting with what was flushed');
      logger.flush();
      process.exit(EXIT_OK);
    }, HARD_EXIT_MS);
    hard.unref();
    daemon
      .stop()
      .then(
        ({ historyRecordsUnwritten }) => {
          // Records the history database did not take are not lost (the state store's journal keeps them), but say so.
          if (historyRecordsUnwritten > 0) logger.warn({ history_records_unwritten: historyRecordsUnwritten }, 'stopped with history records the database did not take: they are kept in the state store and written at the next start');
          else logger.info({ history_records_unwritten: 0 }, 'stopped');
        },
        (err: unknown) => {
          logger.error({ err: errorFields(err) }, 'error during shutdown');
          logger.info('stopped');
        },
      )
      .finally(() => {
        logger.flush();
        process.exit(EXIT_OK);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => {
    if (!started) {
      reloadWhenStarted = true;
      logger.info('SIGHUP during start-up: reloading configuration and rules once started');
      return;
    }
    logger.info('SIGHUP: reloading configuration and rules');
    void daemon.reload();
  });
  try {
    await daemon.start();
  } catch (err) {
    // A stop requested during start-up exits through shutdown(), with code 0.
    if (stopping) return;
    reportStartupError(err);
    await daemon.stop().catch(() => undefined);
    process.exit(EXIT_USAGE);
  }
  started = true;
  if (reloadWhenStarted && !stopping) {
    logger.info('SIGHUP: reloading configuration and rules');
    void daemon.reload();
  }
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the daemon: poll, evaluate rules, notify, serve HTTP (SIGHUP reloads, SIGTERM stops)')
    .requiredOption('-c, --config <file>', 'configuration file (YAML)')
    .option('--listen <host:port>', 'override server.listen')
    .action(async (opts: { config: string; listen?: string }) => {
      let first;
      try {
        first = await loadSetup(opts.config);
      } catch (err) {
        reportStartupError(err);
        process.exit(EXIT_USAGE);
      }
      const logger = createLogger({ level: first.config.log.level });
      let initial: typeof first | undefined = first;
      const daemon = new Daemon({
        // The first load was done above to configure the logger; later loads (reloads) read the file again.
        load: async () => {
          if (initial) {
            const s = initial;
            initial = undefined;
            return s;
          }
          return loadSetup(opts.config);
        },
        clock: systemClock,
        logger,
        version: packageVersion(),
        ...(opts.listen ? { listen: opts.listen } : {}),
      });
      await runDaemon(daemon, logger);
    });
}
