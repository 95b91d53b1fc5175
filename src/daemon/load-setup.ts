import type { LoadedConfig } from '../config/load-config.js';
import { loadConfig } from '../config/load-config.js';
import { ConfigError } from '../base/config-error.js';
import { expandRuleFilePatterns, loadRuleFiles } from '../rules/load-rules.js';
import { loadTemplateSet, type TemplateSet } from '../notify/templates/template-set.js';
import { errorMessage } from '../util/errors.js';
import type { RuleDefinition } from '../rules/registry.js';
import { loadWebConfig, type LoadedWebConfig } from '../http/security/web-config.js';

/** What the daemon runs on: a validated config and its rules. */
export interface LoadedSetup extends LoadedConfig {
  rules: RuleDefinition[];
  /** User notification templates (`templates:` files), undefined when none are configured. */
  templates: TemplateSet | undefined;
  /** `server.web_config_file`, loaded (TLS files read, schema checked); undefined when not set. */
  webConfig: LoadedWebConfig | undefined;
}

/** Config file plus every rule file it names; all problems of both in one ConfigError. */
export async function loadSetup(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedSetup> {
  const loaded = await loadConfig(file, { env });
  const { rules, problems } = await loadRuleFiles(loaded.config.rule_files, loaded.dir, { calendars: new Set(Object.keys(loaded.config.calendars)) });
  if (problems.length > 0) throw new ConfigError(problems);
  let templates: TemplateSet | undefined;
  if (loaded.config.templates.length > 0) {
    const files = await expandRuleFilePatterns(loaded.config.templates, loaded.dir);
    try {
      templates = await loadTemplateSet(files);
    } catch (err) {
      throw new ConfigError([{ file: loaded.file, line: 1, col: 1, message: `templates: ${errorMessage(err)}` }]);
    }
  }
  const webConfigFile = loaded.config.server.web_config_file;
  const webConfig = webConfigFile !== undefined ? await loadWebConfig(webConfigFile) : undefined;
  return { ...loaded, rules, templates, webConfig };
}
