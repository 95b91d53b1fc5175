import type { ReceiverConfig } from '../receiver-schema.js';
import type { Integration } from '../notification.js';
import type { IntegrationDeps } from './integration-deps.js';
import { createAlertmanagerIntegration } from './alertmanager.js';
import { createConsoleIntegration } from './console.js';
import { createEmailIntegration } from './email.js';
import { createSlackIntegration } from './slack.js';
import { createWebhookIntegration } from './webhook.js';

export type { IntegrationDeps } from './integration-deps.js';
export type { TemplateSet } from '../templates/template-set.js';

/**
 * The integrations of one receiver, in a fixed order. Adding an integration means one new file in this
 * folder, its schema in receiver-schema.ts and one line here.
 */
/** Every integration kind (metric label `integration`), in the order a receiver's integrations are built. */
export const INTEGRATION_KINDS = ['slack', 'email', 'alertmanager', 'webhook', 'console'] as const;

/** The integration kinds a receiver configures, in the same order as createIntegrations builds them. */
export function configuredIntegrationKinds(receiver: ReceiverConfig): string[] {
  return INTEGRATION_KINDS.filter((kind) => receiver[kind] !== undefined);
}

export function createIntegrations(receiver: ReceiverConfig, deps: IntegrationDeps): Integration[] {
  const integrations: Integration[] = [];
  if (receiver.slack) integrations.push(createSlackIntegration(receiver.slack, deps));
  if (receiver.email) integrations.push(createEmailIntegration(receiver.email, deps));
  if (receiver.alertmanager) integrations.push(createAlertmanagerIntegration(receiver.alertmanager, deps));
  if (receiver.webhook) integrations.push(createWebhookIntegration(receiver.webhook, deps));
  if (receiver.console) integrations.push(createConsoleIntegration(receiver.console, deps));
  return integrations;
}
