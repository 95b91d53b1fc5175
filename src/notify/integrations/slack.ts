import type { SlackConfig } from '../receiver-schema.js';
import { NotifyError, type Integration } from '../notification.js';
import type { IntegrationDeps } from './integration-deps.js';

export function createSlackIntegration(config: SlackConfig, _deps: IntegrationDeps): Integration {
  return {
    kind: 'slack',
    sendResolved: config.send_resolved,
    send: () => Promise.reject(new NotifyError('slack integration not implemented yet', false)),
  };
}
