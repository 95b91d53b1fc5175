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
  /**
   * Contract 14: an app-level token (`xapp-…`, scope `connections:write`) of a Slack app with Socket Mode and
   * interactivity on: each firing message gets an Acknowledge button, whose clicks come back over Socket Mode (no
   * public URL). Secret (also `app_token_file`).
   */
  app_token: z
    .string()
    .regex(/^xapp-[A-Za-z0-9-]+$/, 'must be a Slack app-level token (xapp-…)')
    .optional(),
  /** Slack's Web API base URL (Socket Mode opens its connection there); another only for a proxy or a test double. */
  api_url: z.url().default('https://slack.com/api/'),
});

export type SlackConfig = z.output<typeof slackConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const SLACK_SECRET_PATHS: readonly (readonly string[])[] = [['webhook_url'], ['app_token']];
