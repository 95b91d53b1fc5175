import { z } from 'zod';
import { duration } from '../../../base/schema-helpers.js';

/**
 * Microsoft Teams: the receiver's `msteams:` section. `webhook_url` is a Workflows (Power Automate) "post to a
 * channel when a webhook request is received" URL, or a legacy incoming-webhook URL: both take the same
 * Adaptive Card message. The URL carries its own credential, so it is a secret.
 */
export const msteamsConfigSchema = z.strictObject({
  webhook_url: z.url(),
  /** `send_resolved` defaults to true, as in Alertmanager. */
  send_resolved: z.boolean().default(true),
  /** A user template (name or inline Handlebars) for the card's text block; the default lists every alert. */
  text_template: z.string().optional(),
  timeout: duration().prefault('10s'),
});

export type MsteamsConfig = z.output<typeof msteamsConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const MSTEAMS_SECRET_PATHS: readonly (readonly string[])[] = [['webhook_url']];
