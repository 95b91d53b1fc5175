import { CONSOLE_SECRET_PATHS, consoleConfigSchema, type ConsoleConfig } from './console-schema.js';
import { defineIntegration } from '../integration-definition.js';
import type { Integration } from '../../notification.js';
import { defaultConsoleLine } from './default-console-template.js';
import { escapePlain } from '../../templates/escape.js';
import { buildTemplateContext } from '../../templates/template-context.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';

/**
 * One readable line per notification on stdout (the demo's receiver). Values are stripped of control
 * characters so a file name cannot forge lines or terminal escapes.
 */
export function createConsoleIntegration(config: ConsoleConfig, deps: IntegrationDeps): Integration {
  const out = deps.stdout ?? process.stdout;
  return {
    kind: 'console',
    sendResolved: config.send_resolved,
    send(n) {
      out.write(`${defaultConsoleLine(buildTemplateContext(n, escapePlain))}\n`);
      return Promise.resolve();
    },
  };
}

export const consoleIntegration = defineIntegration({
  kind: 'console',
  schema: consoleConfigSchema,
  secretPaths: CONSOLE_SECRET_PATHS,
  create: createConsoleIntegration,
});
