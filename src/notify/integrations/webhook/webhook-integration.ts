import { WEBHOOK_SECRET_PATHS, webhookConfigSchema, type WebhookConfig } from './webhook-schema.js';
import { defineIntegration } from '../integration-definition.js';
import type { Integration, Notification } from '../../notification.js';
import { generatorUrl, ZERO_TIME } from '../shared/alert-links.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';
import { postJson } from '../shared/post-json.js';
import { buildTemplateContext, transferText, type AlertContext } from '../../templates/template-context.js';

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
  /** Contract 14: this message escalates a group nobody acknowledged (absent otherwise; not Alertmanager's). */
  escalation?: { step: number; of: number; unacknowledgedSince: string; firstReceiver: string };
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

/**
 * What a person reading the payload needs beyond the rule's own annotations, as two more annotations (the
 * payload's shape stays Alertmanager's): `window`, the window with its zone, and `transfers`, up to 5 of the
 * transfers behind the alert (time, file, code, message), one per line, times in `display_timezone`.
 */
function extraAnnotations(a: AlertContext | undefined): Record<string, string> {
  if (!a) return {};
  const out: Record<string, string> = {};
  if (!a.isMissingFile && a.count !== undefined && a.windowText) out['window'] = a.windowText;
  if (a.hasSamples) out['transfers'] = a.samples.map((s) => transferText(s)).join('\n');
  // Contract 14: who acknowledged it (`ana at 2026-12-02 07:20:00 UTC: calling the bank`).
  if (a.ack) out['acknowledged'] = a.ack;
  return out;
}

/** The payload for one notification; `maxAlerts` 0 means all (Alertmanager's `max_alerts`). */
export function webhookPayload(n: Notification, maxAlerts: number): WebhookPayload {
  const kept = maxAlerts > 0 ? n.alerts.slice(0, maxAlerts) : n.alerts;
  // Plain text: JSON encoding is the payload's only escaping. Every alert, the folded jeopardy phases too.
  const contexts = new Map(buildTemplateContext({ ...n, alerts: kept }, (v) => v, { foldPhases: false }).alerts.map((c) => [c.fingerprint, c]));
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
    ...(n.escalation ? { escalation: { step: n.escalation.step, of: n.escalation.of, unacknowledgedSince: new Date(n.escalation.since).toISOString(), firstReceiver: n.escalation.receiver } } : {}),
    alerts: kept.map((a) => {
      const resolved = a.state === 'resolved';
      return {
        status: resolved ? 'resolved' : 'firing',
        labels: a.labels,
        annotations: { ...extraAnnotations(contexts.get(a.fingerprint)), ...a.annotations },
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
