import { writeFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { pino } from 'pino';
import { createLogger } from '../util/logger.js';
import { errorMessage } from '../util/errors.js';
import { SCENARIO_NAMES, getScenario, isScenarioName, type ScenarioName } from '../simulator/scenarios.js';
import { DEFAULT_HISTORY_DAYS, DEFAULT_PASSWORD, DEFAULT_RATE_PER_MINUTE, DEFAULT_USERNAME, startSimulator } from '../simulator/start-simulator.js';
import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';

interface SimulateOptions {
  port: number;
  host: string;
  seed: number;
  scenario: ScenarioName;
  username: string;
  password: string;
  rate: number;
  historyDays: number;
  control: boolean;
  generate: boolean;
  basePath: string;
  estate: number;
  truth?: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

function integerIn(min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return value;
  };
}

function rate(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1_000_000) throw new InvalidArgumentError('must be a number from 0 to 1000000');
  return value;
}

function scenario(raw: string): ScenarioName {
  if (!isScenarioName(raw)) throw new InvalidArgumentError(`must be one of ${SCENARIO_NAMES.join(', ')}`);
  return raw;
}

const SCENARIO_HELP = SCENARIO_NAMES.map((name) => `  ${name.padEnd(10)} ${getScenario(name).description}`).join('\n');

/** `transfer-watch simulate`: the transfer history service in miniature, for demos, tests and benchmarks. */
export function registerSimulate(program: Command): void {
  program
    .command('simulate')
    .description('serve a simulated transfer history API (POST /oauth/token, GET /reports/v2/transfers) from a seeded generator')
    .option('--port <n>', 'TCP port (0 picks a free one and prints it)', integerIn(0, 65535), 8080)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', 'seed of the generated history (same seed, same history)', integerIn(-2_147_483_648, 4_294_967_295), 1)
    .addOption(new Option('--scenario <name>', 'what the history and the service do (see below)').argParser(scenario).default('steady'))
    .option('--username <u>', 'operator name accepted by POST /oauth/token', DEFAULT_USERNAME)
    .option('--password <p>', 'operator password accepted by POST /oauth/token', DEFAULT_PASSWORD)
    .option('--rate <n>', 'average generated transfers per minute', rate, DEFAULT_RATE_PER_MINUTE)
    .option('--history-days <n>', 'days of history before today (00:00 UTC); nothing exists before', integerIn(0, 3_660), DEFAULT_HISTORY_DAYS)
    .option('--control', 'serve the test-only control API under /_sim/ (inject records, set faults, stats)', false)
    .option('--no-generate', 'no generated history: only records injected through the control API')
    .option('--estate <n>', 'scheduled flows on top of the traffic (business days with holidays, twice a day, weekly, every day, month-end, ad-hoc)', integerIn(0, 5000), 0)
    .option('--truth <file>', 'write the truth of the scheduled flows (JSON: pattern, days, calendar, arrival quantiles) to this file')
    .option('--base-path <path>', 'serve under a path prefix, e.g. /api (next links do not carry it)', '')
    .addOption(new Option('--log-level <level>', 'log level (JSON lines on stderr)').choices(['debug', 'info', 'warn', 'error']).default('warn'))
    .addHelpText('after', `\nScenarios:\n${SCENARIO_HELP}\n\nDefault credentials: username "${DEFAULT_USERNAME}", password "${DEFAULT_PASSWORD}".\nSIGTERM or SIGINT stops the simulator (exit 0).`)
    .action(async (opts: SimulateOptions) => {
      const logger = createLogger({ level: opts.logLevel, destination: pino.destination({ fd: 2, sync: true }) });
      let simulator;
      try {
        simulator = await startSimulator({
          port: opts.port,
          host: opts.host,
          seed: opts.seed,
          scenario: opts.scenario,
          username: opts.username,
          password: opts.password,
          ratePerMinute: opts.rate,
          historyDays: opts.historyDays,
          control: opts.control,
          generate: opts.generate,
          basePath: opts.basePath,
          estate: opts.estate,
          logger,
        });
        if (opts.truth !== undefined) await writeFile(opts.truth, `${JSON.stringify(simulator.truth(), null, 2)}\n`);
      } catch (err) {
        process.stderr.write(`simulate: ${errorMessage(err)}\n`);
        process.exit(EXIT_USAGE);
      }
      const running = simulator;
      process.stdout.write(
        [
          `transfer-watch simulator listening on ${running.url}`,
          `  base_url:  ${running.url}`,
          `  username:  ${opts.username}`,
          `  scenario:  ${opts.scenario} (seed ${opts.seed}, ${opts.rate} transfers/minute${opts.generate ? `, ${opts.historyDays} days of history` : ', generation off'}${opts.estate > 0 ? `, ${opts.estate} scheduled flows` : ''})`,
          ...(opts.control ? [`  control:   ${new URL(running.url).origin}/_sim/ (records, faults, stats)`] : []),
          '',
        ].join('\n'),
      );
      const stop = (): void => {
        void running.close().then(() => process.exit(EXIT_OK));
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
}
