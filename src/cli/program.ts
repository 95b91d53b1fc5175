import type { CommanderError } from 'commander';
import { Command } from 'commander';
import { EXIT_USAGE } from './exit-codes.js';
import { registerRun } from './run.js';
import { registerDemo } from './demo.js';
import { registerCheck } from './check.js';
import { registerTestRules } from './test-rules.js';
import { registerQuery } from './query.js';
import { registerSimulate } from './simulate.js';
import { registerSilence } from './silence.js';
import { registerAck } from './ack.js';
import { registerHistory } from './history.js';
import { registerSla } from './sla.js';
import { registerCalendar } from './calendar.js';
import { registerDiscover } from './discover.js';
import { packageVersion } from './package-version.js';

/** The `transfer-watch` command line: every command, parsed from `argv` (as `process.argv`). */
export async function runProgram(argv: readonly string[]): Promise<void> {
  const program = new Command();
  program
    .name('transfer-watch')
    .description('Monitoring and alerting for managed-file-transfer history: Prometheus metrics, alert rules, notifications.')
    .version(packageVersion())
    .showHelpAfterError()
    // Usage errors exit 2 (contract section 1); commander's default is 1.
    .exitOverride((err: CommanderError) => {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
      process.exit(EXIT_USAGE);
    });

  registerRun(program);
  registerDemo(program);
  registerCheck(program);
  registerTestRules(program);
  registerQuery(program);
  registerSimulate(program);
  registerSilence(program);
  registerAck(program);
  registerHistory(program);
  registerSla(program);
  registerCalendar(program);
  registerDiscover(program);

  await program.parseAsync([...argv]);
}
