import type { Integration } from '../../notification.js';
import { defineIntegration } from '../integration-definition.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';
import { postJson } from '../shared/post-json.js';
import { pagerdutyEvent } from './pagerduty-event.js';
import { PAGERDUTY_SECRET_PATHS, pagerdutyConfigSchema, type PagerdutyConfig } from './pagerduty-schema.js';

/**
 * PagerDuty Events API v2: a trigger per firing notification of a group and a resolve when it resolves, both
 * with dedup_key = the group key, so PagerDuty keeps one incident per group. 429 and 5xx are retried (with
 * Retry-After), 400 is not. The routing key is secret: it is redacted from every error.
 */
export function createPagerdutyIntegration(config: PagerdutyConfig, deps: IntegrationDeps): Integration {
  return {
    kind: 'pagerduty',
    sendResolved: config.send_resolved,
    async send(n, signal) {
      await postJson(config.url, pagerdutyEvent(n, config, deps.clock.now()), {
        kind: 'pagerduty',
        timeoutMs: config.timeout,
        clock: deps.clock,
        secrets: [config.routing_key],
        idempotencyKey: n.idempotencyKey,
        ...(signal ? { signal } : {}),
      });
    },
  };
}

export const pagerdutyIntegration = defineIntegration({
  kind: 'pagerduty',
  schema: pagerdutyConfigSchema,
  secretPaths: PAGERDUTY_SECRET_PATHS,
  create: createPagerdutyIntegration,
});
