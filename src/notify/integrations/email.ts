import type { EmailConfig } from '../receiver-schema.js';
import { NotifyError, type Integration } from '../notification.js';
import type { IntegrationDeps } from './integration-deps.js';

export function createEmailIntegration(config: EmailConfig, _deps: IntegrationDeps): Integration {
  return {
    kind: 'email',
    sendResolved: config.send_resolved,
    send: () => Promise.reject(new NotifyError('email integration not implemented yet', false)),
  };
}
