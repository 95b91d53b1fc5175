import { alertmanagerIntegration } from './alertmanager/alertmanager-integration.js';
import { consoleIntegration } from './console/console-integration.js';
import { emailIntegration } from './email/email-integration.js';
import { msteamsIntegration } from './msteams/msteams-integration.js';
import { pagerdutyIntegration } from './pagerduty/pagerduty-integration.js';
import { slackIntegration } from './slack/slack-integration.js';
import { webhookIntegration } from './webhook/webhook-integration.js';

/**
 * Every integration kind, in the order a receiver's integrations are built. Adding an integration is one
 * folder under integrations/ and one line here: the receiver schema, the kinds, the `*_file` secret fields
 * and redaction are all derived from this list.
 */
export const INTEGRATIONS = [
  slackIntegration,
  emailIntegration,
  alertmanagerIntegration,
  webhookIntegration,
  consoleIntegration,
  msteamsIntegration,
  pagerdutyIntegration,
] as const;

export type IntegrationKind = (typeof INTEGRATIONS)[number]['kind'];
