import { WEBHOOK_SECRET_PATHS, webhookConfigSchema, type WebhookConfig } from './webhook-schema.js';
import { defineIntegration } from '../integration-definition.js';
import type { Integration, Notification } from '../../notification.js';
import { generatorUrl, ZERO_TIME } from '../shared/alert-links.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';
import { postJson } from '../shared/post-json.js';

/** Exactly Alertmanager's webhook payload (version 4), so existing webhook receivers work unchanged. */
export interface WebhookPayload {
  version: '4';
  groupKey: string;
  truncatedAlerts: number;
  status: 'firing' | 'resolved';
  receiver: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: WebhookAlert[];
}

export interface WebhookAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** The payload for one notification; `maxAlerts` 0 means all (Alertmanager's `max_alerts`). */
export function webhookPayload(n: Notification, maxAlerts: number): WebhookPayload {
  const kept = maxAlerts > 0 ? n.alerts.slice(0, maxAlerts) : n.alerts;
  return {
    version: '4',
    groupKey: n.groupKey,
    truncatedAlerts: n.alerts.length - kept.length,
    status: n.status,
    receiver: n.receiver,
    groupLabels: n.groupLabels,
    commonLabels: n.commonLabels,
    commonAnnotations: n.commonAnnotations,
    externalURL: n.externalUrl,
    alerts: kept.map((a) => {
      const resolved = a.state === 'resolved';
      return {
        status: resolved ? 'resolved' : 'firing',
        labels: a.labels,
        annotations: a.annotations,
        startsAt: new Date(a.firedAt ?? a.activeAt).toISOString(),
        endsAt: resolved && a.resolvedAt !== undefined ? new Date(a.resolvedAt).toISOString() : ZERO_TIME,
        generatorURL: generatorUrl(n, a),
        fingerprint: a.fingerprint,
      };
    }),
  };
}

/**
 * Generic webhook: a POST of Alertmanager's webhook JSON, with optional extra headers and a bearer
 * token. JSON needs no channel escaping; the token and the URL never appear in errors.
 */
export function createWebhookIntegration(config: WebhookConfig, deps: IntegrationDeps): Integration {
  const headers: Record<string, string> = { ...config.headers };
  if (config.bearer_token) headers.authorization = `Bearer ${config.bearer_token}`;
  const secrets = [config.bearer_token ?? '', ...Object.values(config.headers)];
  return {
    kind: 'webhook',
    sendResolved: config.send_resolved,
    async send(n, signal) {
      await postJson(config.url, webhookPayload(n, config.max_alerts), {
        kind: 'webhook',
        headers,
        timeoutMs: config.timeout,
        clock: deps.clock,
        idempotencyKey: n.idempotencyKey,
        secrets,
        ...(signal ? { signal } : {}),
      });
    },
  };
}

export const webhookIntegration = defineIntegration({
  kind: 'webhook',
  schema: webhookConfigSchema,
  secretPaths: WEBHOOK_SECRET_PATHS,
  create: createWebhookIntegration,
});
