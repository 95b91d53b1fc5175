import { TransferWatchError } from '../util/errors.js';
import type { Problem } from './problem.js';
import { formatProblem } from './problem.js';

/**
 * The config file was read but is not valid. Carries every problem found, so `check` and a reload can
 * list them all at once instead of making the user fix them one run at a time.
 */
export class ConfigError extends TransferWatchError {
  override readonly code = 'config_invalid';
  readonly problems: Problem[];
  /**
   * What could still be read of an invalid config, so `check` can go on with the next stages (rule files,
   * web config) and list their problems in the same run.
   */
  partial: { ruleFiles: string[]; dir: string; webConfigFile?: string; calendars?: string[]; unsetVariables?: Problem[] } | undefined;

  constructor(problems: Problem[]) {
    const first = problems[0];
    const summary = first ? formatProblem(first) : 'invalid configuration';
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    super('config_invalid', `${summary}${more}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The config file itself could not be read: a start-up error (exit 2), not a validation failure. */
export class ConfigReadError extends TransferWatchError {
  override readonly code = 'config_unreadable';

  constructor(message: string, options?: { cause?: unknown }) {
    super('config_unreadable', message, options);
    this.name = 'ConfigReadError';
  }
}
