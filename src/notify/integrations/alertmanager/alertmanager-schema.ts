import { z } from 'zod';
import { duration } from '../../../base/schema-helpers.js';

/** `send_resolved` defaults to true, as in Alertmanager. */
const sendResolved = z.boolean().default(true);

/** Alertmanager as a receiver: the receiver's `alertmanager:` section. */
export const alertmanagerConfigSchema = z.strictObject({
  url: z.url(),
  send_resolved: sendResolved,
  /** How often firing alerts are re-posted (Alertmanager expects clients to repeat them). */
  resend_interval: duration().prefault('60s'),
  timeout: duration().prefault('10s'),
});

export type AlertmanagerConfig = z.output<typeof alertmanagerConfigSchema>;

/** Secret fields of this section (see IntegrationDefinition.secretPaths). */
export const ALERTMANAGER_SECRET_PATHS: readonly (readonly string[])[] = [];
