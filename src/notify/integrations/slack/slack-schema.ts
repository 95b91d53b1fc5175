import { z } from 'zod';

/** `send_resolved` defaults to true, as in Alertmanager. */
const sendResolved = z.boolean().default(true);

/** Slack incoming webhook: the receiver's `slack:` section. */
export const slackConfigSchema = z.strictObject({
  webhook_url: z.url(),
  send_resolved: sendResolved,
  channel: z.string().optional(),
  username: z.string().optional(),
  icon_emoji: z.string().optional(),
  template: z.string().optional(),
});

export type SlackConfig = z.output<typeof slackConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const SLACK_SECRET_PATHS: readonly (readonly string[])[] = [['webhook_url']];
