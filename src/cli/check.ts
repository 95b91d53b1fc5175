import type { Command } from 'commander';
import { ConfigError } from '../base/config-error.js';
import type { LoadedConfig } from '../config/load-config.js';
import { loadConfig } from '../config/load-config.js';
import type { Problem } from '../base/problem.js';
import { formatProblem } from '../base/problem.js';
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
export async function runCheck(configFile: string, out: CheckOutput, env: NodeJS.ProcessEnv = process.env, opts: { allowMissingEnv?: boolean } = {}): Promise<number> {
  const problems: Problem[] = [];
  let loaded: LoadedConfig | undefined;
  let partial: ConfigError['partial'];
  try {
    loaded = await loadConfig(configFile, { env, ...(opts.allowMissingEnv ? { allowMissingEnv: true } : {}) });
  } catch (err) {
    if (!(err instanceof ConfigError)) {
      out.stderr(`check: ${errorMessage(err)}`);
      return EXIT_USAGE;
    }
    problems.push(...err.problems);
    partial = err.partial;
  }

  // Every stage that can run does, even when the config has problems: one run lists them all.
  let ruleFiles: string[] = [];
  const rulePatterns = loaded?.config.rule_files ?? partial?.ruleFiles ?? [];
  const ruleDir = loaded?.dir ?? partial?.dir;
  if (ruleDir !== undefined && rulePatterns.length > 0) {
    try {
      const rules = await loadRuleFiles(rulePatterns, ruleDir);
      problems.push(...rules.problems);
      ruleFiles = rules.files;
    } catch (err) {
      out.stderr(`check: ${redactSecrets(errorMessage(err), loaded?.secrets ?? [])}`);
      return EXIT_USAGE;
    }
  }

  const webConfigFile = loaded?.config.server.web_config_file ?? partial?.webConfigFile;
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
    problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
    for (const p of problems) out.stderr(redactSecrets(formatProblem(p), secrets));
    return EXIT_FAILURE;
  }
  out.stdout(`OK: ${configFile}`);
  for (const file of ruleFiles) out.stdout(`OK: ${file}`);
  if (webConfigFile !== undefined) out.stdout(`OK: ${webConfigFile}`);
  if (loaded?.missingEnv && loaded.missingEnv.length > 0) out.stdout(`not set, so the values they fill were not checked: ${loaded.missingEnv.join(', ')}`);
  return EXIT_OK;
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('validate the config file and every rule file it names; print each problem as FILE:LINE:COL: message')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .option(
      '--allow-missing-env',
      'an unset ${VAR} is not a problem: check the file without the deployment\'s secrets (CI); the values such variables fill are not checked',
    )
    .action(async (opts: { config: string; allowMissingEnv?: boolean }) => {
      process.exitCode = await runCheck(
        opts.config,
        {
          stdout: (line) => process.stdout.write(`${line}\n`),
          stderr: (line) => process.stderr.write(`${line}\n`),
        },
        process.env,
        { allowMissingEnv: opts.allowMissingEnv === true },
      );
    });
}
