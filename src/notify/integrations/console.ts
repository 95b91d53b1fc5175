import type { ConsoleConfig } from '../receiver-schema.js';
import { NotifyError, type Integration } from '../notification.js';
import type { IntegrationDeps } from './integration-deps.js';

export function createConsoleIntegration(config: ConsoleConfig, _deps: IntegrationDeps): Integration {
  return {
    kind: 'console',
    sendResolved: config.send_resolved,
    send: () => Promise.reject(new NotifyError('console integration not implemented yet', false)),
  };
}
