import type { Command } from 'commander';
import { ConfigError } from '../config/config-error.js';
import type { LoadedConfig } from '../config/load-config.js';
import { loadConfig } from '../config/load-config.js';
import type { Problem } from '../config/problem.js';
import { formatProblem } from '../config/problem.js';
import { loadRuleFiles } from '../rules/load-rules.js';
import { loadWebConfig } from '../http/security/web-config.js';
import { errorMessage } from '../util/errors.js';
import { redactSecrets } from '../util/redact.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

export interface CheckOutput {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

/**
 * Validates the config and every rule file it names. All validators feed one `problems` list, so the
 * user sees every problem in one run. Returns the exit code: 0 ok, 1 problems, 2 the config file could
 * not be read at all.
 */
export async function runCheck(configFile: string, out: CheckOutput, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const problems: Problem[] = [];
  let loaded: LoadedConfig | undefined;
  try {
    loaded = await loadConfig(configFile, { env });
  } catch (err) {
    if (!(err instanceof ConfigError)) {
      out.stderr(`check: ${errorMessage(err)}`);
      return EXIT_USAGE;
    }
    problems.push(...err.problems);
  }

  let ruleFiles: string[] = [];
  if (loaded) {
    try {
      const rules = await loadRuleFiles(loaded.config.rule_files, loaded.dir);
      problems.push(...rules.problems);
      ruleFiles = rules.files;
    } catch (err) {
      out.stderr(`check: ${redactSecrets(errorMessage(err), loaded.secrets)}`);
      return EXIT_USAGE;
    }
  }

  const webConfigFile = loaded?.config.server.web_config_file;
  if (webConfigFile !== undefined) {
    try {
      await loadWebConfig(webConfigFile);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }

  if (problems.length > 0) {
    const secrets = loaded?.secrets ?? [];
    for (const p of problems) out.stderr(redactSecrets(formatProblem(p), secrets));
    return EXIT_FAILURE;
  }
  out.stdout(`OK: ${configFile}`);
  for (const file of ruleFiles) out.stdout(`OK: ${file}`);
  if (webConfigFile !== undefined) out.stdout(`OK: ${webConfigFile}`);
  return EXIT_OK;
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('validate the config file and every rule file it names; print each problem as FILE:LINE:COL: message')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .action(async (opts: { config: string }) => {
      process.exitCode = await runCheck(opts.config, {
        stdout: (line) => process.stdout.write(`${line}\n`),
        stderr: (line) => process.stderr.write(`${line}\n`),
      });
    });
}
