import type { ConsoleConfig } from '../receiver-schema.js';
import type { Integration } from '../notification.js';
import { defaultConsoleLine } from '../templates/default-console.js';
import { escapePlain } from '../templates/escape.js';
import { buildTemplateContext } from '../templates/template-context.js';
import type { IntegrationDeps } from './integration-deps.js';

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
