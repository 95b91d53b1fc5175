import path from 'node:path';
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
 * What `check` makes of a `${VAR}` that is unset and has no default:
 * - `warn` (the default): a warning at its first use, which does not fail the check. Like promtool's lint
 *   warnings: a config is checked in CI or on a laptop without the deployment's secrets, and `run` still refuses
 *   to start without the variable.
 * - `allow` (`--allow-missing-env`): not even a warning; the variables are listed once on stdout.
 * - `require` (`--require-env`): a problem, as `run` treats it (checking a config in the environment it runs in).
 */
export type UnsetEnvMode = 'warn' | 'allow' | 'require';

/**
 * Validates the config and every rule file it names. All validators feed one `problems` list, so the
 * user sees every problem in one run. Returns the exit code: 0 ok, 1 problems, 2 the config file could
 * not be read at all.
 */
export async function runCheck(configFile: string, out: CheckOutput, env: NodeJS.ProcessEnv = process.env, opts: { unsetEnv?: UnsetEnvMode } = {}): Promise<number> {
  const unsetEnv = opts.unsetEnv ?? 'warn';
  const problems: Problem[] = [];
  let warnings: Problem[] = [];
  let loaded: LoadedConfig | undefined;
  let partial: ConfigError['partial'];
  try {
    loaded = await loadConfig(configFile, { env, ...(unsetEnv !== 'require' ? { allowMissingEnv: true } : {}) });
    if (unsetEnv === 'warn') warnings = loaded.unsetVariables ?? [];
    warnings = [...warnings, ...(loaded.warnings ?? [])];
  } catch (err) {
    if (!(err instanceof ConfigError)) {
      out.stderr(`check: ${errorMessage(err)}`);
      return EXIT_USAGE;
    }
    problems.push(...err.problems);
    partial = err.partial;
    if (unsetEnv === 'warn') warnings = partial?.unsetVariables ?? [];
  }

  // Every stage that can run does, even when the config has problems: one run lists them all.
  let ruleFiles: string[] = [];
  const rulePatterns = loaded?.config.rule_files ?? partial?.ruleFiles ?? [];
  const ruleDir = loaded?.dir ?? partial?.dir;
  if (ruleDir !== undefined && rulePatterns.length > 0) {
    try {
      const calendars = loaded ? Object.keys(loaded.config.calendars) : partial?.calendars;
      const rules = await loadRuleFiles(rulePatterns, ruleDir, { ...(calendars ? { calendars: new Set(calendars) } : {}), configFile });
      problems.push(...rules.problems);
      warnings = [...warnings, ...rules.warnings];
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

  // Problems and warnings in one list, in the order the files are read — the config, its rule files as rule_files
  // names them, the web config — then by line; only problems fail the check.
  const lines = [...problems, ...warnings.map((w) => ({ ...w, message: `warning: ${w.message}` }))];
  const secrets = loaded?.secrets ?? [];
  const fileOrder = new Map<string, number>();
  for (const file of [configFile, path.resolve(configFile), ...(loaded ? [loaded.file] : []), ...ruleFiles, ...(webConfigFile ? [webConfigFile] : [])]) {
    if (!fileOrder.has(file)) fileOrder.set(file, fileOrder.size);
  }
  const orderOf = (file: string): number => fileOrder.get(file) ?? fileOrder.size;
  lines.sort((a, b) => orderOf(a.file) - orderOf(b.file) || a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
  for (const p of lines) out.stderr(redactSecrets(formatProblem(p), secrets));
  if (problems.length > 0) return EXIT_FAILURE;
  out.stdout(`OK: ${configFile}`);
  for (const file of ruleFiles) out.stdout(`OK: ${file}`);
  if (webConfigFile !== undefined) out.stdout(`OK: ${webConfigFile}`);
  if (unsetEnv === 'allow' && loaded?.missingEnv && loaded.missingEnv.length > 0) out.stdout(`not set, so the values they fill were not checked: ${loaded.missingEnv.join(', ')}`);
  return EXIT_OK;
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('validate the config file and every rule file it names; print each problem as FILE:LINE:COL: message')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addHelpText(
      'after',
      '\nAn unset ${VAR} without a default is a warning (as promtool\'s lint warnings: the config is checked without the\n' +
        'deployment\'s secrets) and the values it fills are not checked; `run` refuses to start without it.',
    )
    .option('--require-env', 'an unset ${VAR} without a default is a problem (exit 1), as `run` treats it: check a config where it runs')
    .option('--allow-missing-env', 'no warning for an unset ${VAR}: list such variables once on stdout')
    .action(async (opts: { config: string; allowMissingEnv?: boolean; requireEnv?: boolean }) => {
      if (opts.requireEnv && opts.allowMissingEnv) {
        process.stderr.write('check: --require-env and --allow-missing-env contradict each other\n');
        process.exitCode = EXIT_USAGE;
        return;
      }
      process.exitCode = await runCheck(
        opts.config,
        {
          stdout: (line) => process.stdout.write(`${line}\n`),
          stderr: (line) => process.stderr.write(`${line}\n`),
        },
        process.env,
        { unsetEnv: opts.requireEnv ? 'require' : opts.allowMissingEnv ? 'allow' : 'warn' },
      );
    });
}
