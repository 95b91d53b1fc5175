import { z } from 'zod';
import { duration } from '../../../base/schema-helpers.js';

/** `send_resolved` defaults to true, as in Alertmanager. */
const sendResolved = z.boolean().default(true);

/** Generic webhook (Alertmanager webhook payload v4): the receiver's `webhook:` section. */
export const webhookConfigSchema = z.strictObject({
  url: z.url(),
  send_resolved: sendResolved,
  headers: z.record(z.string(), z.string()).default({}),
  bearer_token: z.string().optional(),
  max_alerts: z.number().int().min(0).default(0),
  timeout: duration().prefault('10s'),
});

export type WebhookConfig = z.output<typeof webhookConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const WEBHOOK_SECRET_PATHS: readonly (readonly string[])[] = [['url'], ['bearer_token'], ['headers', '*']];
