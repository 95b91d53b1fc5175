import { ConfigError } from '../base/config-error.js';
import { formatProblem } from '../base/problem.js';
import { errorMessage } from '../util/errors.js';

/** Print why a command could not start: each config/rule problem on its own line, else the error's message. */
export function reportStartupError(err: unknown): void {
  if (err instanceof ConfigError) {
    for (const p of err.problems) process.stderr.write(`${formatProblem(p)}\n`);
    return;
  }
  process.stderr.write(`transfer-watch: ${errorMessage(err)}\n`);
}
