import type { AlertmanagerConfig } from '../receiver-schema.js';
import { NotifyError, type Integration } from '../notification.js';
import type { IntegrationDeps } from './integration-deps.js';

export function createAlertmanagerIntegration(config: AlertmanagerConfig, _deps: IntegrationDeps): Integration {
  return {
    kind: 'alertmanager',
    sendResolved: config.send_resolved,
    send: () => Promise.reject(new NotifyError('alertmanager integration not implemented yet', false)),
  };
}
