import type { Command } from 'commander';
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ShiftedClock } from '../util/clock.js';
import { formatTime } from '../util/format-time.js';
import { createLogger } from '../util/logger.js';
import { configSchema } from '../config/schema.js';
import { ConfigError } from '../base/config-error.js';
import { loadRuleFiles } from '../rules/load-rules.js';
import { startSimulator } from '../simulator/start-simulator.js';
import { ESTATE_CALENDAR, ESTATE_CALENDAR_NAME } from '../simulator/estate.js';
import { Daemon } from '../daemon/daemon.js';
import { runDaemon } from './run.js';
import { packageVersion } from './package-version.js';
import { EXIT_USAGE } from './exit-codes.js';
import { reportStartupError } from './report-startup-error.js';

/** The bundled example rules, shipped in the package next to dist/. */
const RULES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules');

const DEMO_USER = 'demo';
const DEMO_PASSWORD = 'demo';

/**
 * `transfer-watch demo`: the daemon against the built-in simulator (error bursts and late files), with the
 * example rules and a console receiver, so anyone sees metrics and alerts in one command with no setup.
 * Intervals are short so alerts appear and resolve within minutes.
 */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the daemon against the built-in simulator with the example rules and console notifications')
    .option('-p, --port <n>', 'HTTP port of the daemon', '9464')
    .option('--host <host>', 'HTTP address of the daemon', '127.0.0.1')
    .option('--seed <n>', 'simulator seed', '1')
    .option('--state-dir <dir>', 'state directory (default: a new temporary folder)')
    .action(async (opts: { port: string; host: string; seed: string; stateDir?: string }) => {
      const port = Number(opts.port);
      const seed = Number(opts.seed);
      if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(seed)) {
        process.stderr.write('demo: --port must be 0-65535 and --seed an integer\n');
        process.exit(EXIT_USAGE);
      }
      const logger = createLogger({ level: 'warn', destination: undefined });
      // A simulated business morning: the daily statements' 08:00 deadline (America/Sao_Paulo) comes 45 s after
      // start, BANK2's statement is missing at it and arrives late within the minute after; bursts and late
      // position files come as always. Simulator and daemon share the clock, so every time shown is the simulated one.
      const clock = new ShiftedClock(demoMorning(Date.now()));
      // Two months of a partner estate's scheduled files (for /flows), under a day of the morning's dense traffic.
      const simulator = await startSimulator({
        port: 0,
        host: '127.0.0.1',
        seed,
        scenario: 'demo',
        username: DEMO_USER,
        password: DEMO_PASSWORD,
        clock,
        estate: DEMO_ESTATE_FLOWS,
        historyDays: DEMO_FLOW_DAYS,
        trafficDays: 1,
        // The banks' daily statements of the last weeks: /flows shows the demo's own partners, their statements
        // watched by the shipped DailyStatementMissing.
        statementDays: DEMO_STATEMENT_DAYS,
      });
      const stateDir = opts.stateDir ?? (await mkdtemp(path.join(os.tmpdir(), 'transfer-watch-demo-')));
      // A folder the demo made is the demo's to remove when it ends (Ctrl-C, SIGTERM); one the user named is kept.
      if (opts.stateDir === undefined) process.on('exit', () => rmSync(stateDir, { recursive: true, force: true }));
      const load = async () => {
        const config = configSchema.parse({
          sources: [{ name: 'demo', base_url: simulator.url, username: DEMO_USER, password: DEMO_PASSWORD, timeout: '5s' }],
          // 9 h of history at start: the statements' 8 h windows are judged only on history read whole.
          poll: { interval: '5s', success_interval: '5s', delay: '1s', overlap: '1m', initial_lookback: '9h', max_window: '3h', stale_after: '1m' },
          state: { dir: stateDir },
          rule_files: [path.join(RULES_DIR, '*.yaml')],
          receivers: [{ name: 'console', console: { send_resolved: true } }],
          route: { receiver: 'console', group_by: ['alertname', 'source', 'mft_instance', 'user'], group_wait: '5s', group_interval: '10s', repeat_interval: '1h' },
          server: { listen: `${opts.host}:${port}` },
          // The demo's morning is São Paulo's: every time shown is in its zone, deadlines included.
          display_timezone: 'America/Sao_Paulo',
          log: { level: 'warn' },
          // The estate's business days skip Brazil's holidays; /flows learns its flows from the last 60 days at start
          // (a read of its own: the SLA ledger starts with the morning's deadlines).
          calendars: { [ESTATE_CALENDAR_NAME]: ESTATE_CALENDAR },
          flows: { backfill: `${DEMO_FLOW_DAYS}d` },
        });
        const { rules, problems } = await loadRuleFiles(config.rule_files, RULES_DIR);
        if (problems.length > 0) throw new ConfigError(problems);
        return { config, file: '<demo>', dir: RULES_DIR, secrets: [DEMO_PASSWORD], rules, templates: undefined, webConfig: undefined };
      };
      // amtool and `transfer-watch silence` live on the wall clock: the API translates their times.
      const daemon = new Daemon({ load, clock, logger, version: packageVersion(), apiTimeOffsetMs: clock.offsetMs });
      process.on('exit', () => void simulator.close());
      try {
        await runDaemon(daemon, logger);
      } catch (err) {
        reportStartupError(err);
        process.exit(EXIT_USAGE);
      }
      const url = daemon.url ?? `http://${opts.host}:${port}`;
      process.stdout.write(
        [
          'transfer-watch demo is running against the built-in simulator (error bursts and late files).',
          `  simulator:  ${simulator.url}`,
          `  status page: ${url}/`,
          `  metrics:    ${url}/metrics`,
          `  alerts:     ${url}/api/v1/alerts`,
          `  flows:      ${url}/flows (the partners' scheduled files, learned from 60 days of history)`,
          `  status:     ${url}/api/v1/status`,
          `  state dir:  ${stateDir}`,
          `Simulated time: a business morning from ${formatTime(clock.now(), 'America/Sao_Paulo')}, moving at real speed.`,
          'Within three minutes: at 08:00 BANK2\'s daily statement is missing, then it arrives late and the alert resolves',
          'saying so; the 08:00 position file from CUSTODIA is late and arrives at 08:01; a partner\'s connection breaks at',
          '08:00 and its error burst fires (one every 5 minutes).',
          'Alerts are printed below as they fire and resolve. Ctrl-C stops.',
          '',
        ].join('\n'),
      );
    });
}

/** The scheduled flows of the demo's partner estate, and the days of history they are learned from. */
const DEMO_ESTATE_FLOWS = 24;
const DEMO_FLOW_DAYS = 60;
const DEMO_STATEMENT_DAYS = 21;

/**
 * 07:59:15 in America/Sao_Paulo (UTC-03:00, no DST since 2019) on the latest business day at or before `now`:
 * the statements' deadline is 45 s away.
 */
export function demoMorning(now: number): number {
  const SAO_PAULO_OFFSET_MS = -3 * 3_600_000;
  const DAY_MS = 86_400_000;
  let day = Math.floor((now + SAO_PAULO_OFFSET_MS) / DAY_MS);
  // 1970-01-01 was a Thursday (4); skip back over Saturday (6) and Sunday (0).
  while ((day + 4) % 7 === 0 || (day + 4) % 7 === 6) day -= 1;
  return day * DAY_MS - SAO_PAULO_OFFSET_MS + (7 * 60 + 59.25) * 60_000;
}
