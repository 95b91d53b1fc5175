import type { LoadedConfig } from '../config/load-config.js';
import { loadConfig } from '../config/load-config.js';
import { ConfigError } from '../config/config-error.js';
import { loadRuleFiles } from '../rules/load-rules.js';
import type { RuleDefinition } from '../rules/registry.js';

/** What the daemon runs on: a validated config and its rules. */
export interface LoadedSetup extends LoadedConfig {
  rules: RuleDefinition[];
}

/** Config file plus every rule file it names; all problems of both in one ConfigError. */
export async function loadSetup(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedSetup> {
  const loaded = await loadConfig(file, { env });
  const { rules, problems } = await loadRuleFiles(loaded.config.rule_files, loaded.dir);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...loaded, rules };
}
