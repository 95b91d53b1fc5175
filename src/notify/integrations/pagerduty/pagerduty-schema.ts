import { z } from 'zod';
import { duration } from '../../../base/schema-helpers.js';

/** PagerDuty Events API v2: the receiver's `pagerduty:` section. */
export const pagerdutyConfigSchema = z.strictObject({
  /** The integration key of an Events API v2 integration on a PagerDuty service. */
  routing_key: z.string().min(1),
  url: z.url().default('https://events.pagerduty.com/v2/enqueue'),
  /** `send_resolved` defaults to true: the incident resolves when the group does. */
  send_resolved: z.boolean().default(true),
  /**
   * PagerDuty severity (critical, error, warning, info). Default: the group's common `severity` label when it
   * is one of those, else `error`.
   */
  severity: z.enum(['critical', 'error', 'warning', 'info']).optional(),
  /** `payload.source`: where the problem is. Default: the alerts' common `source` label, else `transfer-watch`. */
  source: z.string().optional(),
  /** `payload.class` and `payload.component`, shown in the incident. */
  class: z.string().optional(),
  component: z.string().optional(),
  timeout: duration().prefault('10s'),
});

export type PagerdutyConfig = z.output<typeof pagerdutyConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const PAGERDUTY_SECRET_PATHS: readonly (readonly string[])[] = [['routing_key']];
