import { z } from 'zod';

/** Alertmanager's webhook payload (version 4), as the contract promises it: parsed, not cast. */
export const webhookPayloadSchema = z.object({
  version: z.literal('4'),
  groupKey: z.string(),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string(),
  groupLabels: z.record(z.string(), z.string()),
  commonLabels: z.record(z.string(), z.string()),
  commonAnnotations: z.record(z.string(), z.string()),
  externalURL: z.string().optional(),
  alerts: z.array(
    z.object({
      status: z.enum(['firing', 'resolved']),
      labels: z.record(z.string(), z.string()),
      annotations: z.record(z.string(), z.string()),
      startsAt: z.string(),
      endsAt: z.string(),
      generatorURL: z.string().optional(),
      fingerprint: z.string(),
    }),
  ),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

/** A Slack incoming-webhook message as sent by @slack/webhook. */
export const slackMessageSchema = z.object({
  text: z.string(),
  blocks: z.array(z.record(z.string(), z.unknown())).optional(),
});
