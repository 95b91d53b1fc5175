import type { WebhookConfig } from '../receiver-schema.js';
import { NotifyError, type Integration } from '../notification.js';
import type { IntegrationDeps } from './integration-deps.js';

export function createWebhookIntegration(config: WebhookConfig, _deps: IntegrationDeps): Integration {
  return {
    kind: 'webhook',
    sendResolved: config.send_resolved,
    send: () => Promise.reject(new NotifyError('webhook integration not implemented yet', false)),
  };
}
