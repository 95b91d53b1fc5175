import { z } from 'zod';
import { duration, name } from '../config/schema-helpers.js';

/**
 * Receiver configuration. Each integration's options; a receiver may combine several integrations.
 * Secrets (`webhook_url`, `password`, `bearer_token`) also accept a `*_file` form, resolved by the
 * config loader before validation.
 */
const sendResolved = z.boolean().default(true);

export const slackConfigSchema = z.strictObject({
  webhook_url: z.url(),
  send_resolved: sendResolved,
  channel: z.string().optional(),
  username: z.string().optional(),
  icon_emoji: z.string().optional(),
  template: z.string().optional(),
});

export const emailConfigSchema = z.strictObject({
  smtp: z.strictObject({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65535).default(587),
    /** true: TLS from the first byte (port 465). false: STARTTLS when the server offers it. */
    secure: z.boolean().default(false),
    require_tls: z.boolean().default(false),
    username: z.string().default(''),
    password: z.string().default(''),
    tls: z.strictObject({ ca_file: z.string().default(''), insecure_skip_verify: z.boolean().default(false) }).prefault({}),
  }),
  from: z.string().min(1),
  to: z.array(z.string().min(1)).min(1),
  send_resolved: sendResolved,
  subject_template: z.string().optional(),
  text_template: z.string().optional(),
  html_template: z.string().optional(),
});

export const alertmanagerConfigSchema = z.strictObject({
  url: z.url(),
  send_resolved: sendResolved,
  /** How often firing alerts are re-posted (Alertmanager expects clients to repeat them). */
  resend_interval: duration().prefault('60s'),
  timeout: duration().prefault('10s'),
});

export const webhookConfigSchema = z.strictObject({
  url: z.url(),
  send_resolved: sendResolved,
  headers: z.record(z.string(), z.string()).default({}),
  bearer_token: z.string().optional(),
  max_alerts: z.number().int().min(0).default(0),
  timeout: duration().prefault('10s'),
});

export const consoleConfigSchema = z.strictObject({
  send_resolved: sendResolved,
});

export const receiverSchema = z
  .strictObject({
    name: name(),
    slack: slackConfigSchema.optional(),
    email: emailConfigSchema.optional(),
    alertmanager: alertmanagerConfigSchema.optional(),
    webhook: webhookConfigSchema.optional(),
    console: consoleConfigSchema.optional(),
  });

export type ReceiverConfig = z.output<typeof receiverSchema>;
export type SlackConfig = z.output<typeof slackConfigSchema>;
export type EmailConfig = z.output<typeof emailConfigSchema>;
export type AlertmanagerConfig = z.output<typeof alertmanagerConfigSchema>;
export type WebhookConfig = z.output<typeof webhookConfigSchema>;
export type ConsoleConfig = z.output<typeof consoleConfigSchema>;
