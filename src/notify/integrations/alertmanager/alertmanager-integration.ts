import { ALERTMANAGER_SECRET_PATHS, alertmanagerConfigSchema, type AlertmanagerConfig } from './alertmanager-schema.js';
import { defineIntegration } from '../integration-definition.js';
import type { Integration, Notification } from '../../notification.js';
import { generatorUrl, nonEmptyLabels } from '../shared/alert-links.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';
import { postJson } from '../shared/post-json.js';

/** One element of Alertmanager's `POST /api/v2/alerts` body (postableAlert). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
}

/**
 * A firing alert is valid for this many resend intervals; Prometheus uses 4 so that a few lost posts
 * do not resolve the alert, while a dead daemon's alerts still end on their own.
 */
export const VALID_FOR_RESEND_INTERVALS = 4;

export function alertmanagerAlerts(n: Notification, now: number, resendIntervalMs: number): PostableAlert[] {
  return n.alerts.map((a) => {
    const resolved = a.state === 'resolved';
    const endsAt = resolved ? (a.resolvedAt ?? now) : now + VALID_FOR_RESEND_INTERVALS * resendIntervalMs;
    const link = generatorUrl(n, a);
    return {
      labels: nonEmptyLabels(a.labels),
      annotations: a.annotations,
      startsAt: new Date(a.firedAt ?? a.activeAt).toISOString(),
      endsAt: new Date(endsAt).toISOString(),
      ...(link ? { generatorURL: link } : {}),
    };
  });
}

/** `{url}/api/v2/alerts`, keeping any path prefix of `url` (Alertmanager behind a reverse proxy). */
export function alertsEndpoint(url: string): string {
  return `${url.replace(/\/+$/, '')}/api/v2/alerts`;
}

/**
 * Alertmanager as a receiver: transfer-watch acts as an Alertmanager client, the way Prometheus does.
 * Firing alerts are posted with `endsAt` a few resend intervals ahead, so Alertmanager resolves them by
 * itself if transfer-watch goes away; resolved alerts are posted with `endsAt` = their resolution time.
 *
 * Expectation on the dispatcher: for every firing group it must call send() at least every
 * `resendInterval` ms (the receiver's `resend_interval`), even when nothing changed, or Alertmanager
 * will consider the alerts resolved once `endsAt` passes.
 */
export function createAlertmanagerIntegration(config: AlertmanagerConfig, deps: IntegrationDeps): Integration {
  const endpoint = alertsEndpoint(config.url);
  return {
    kind: 'alertmanager',
    sendResolved: config.send_resolved,
    resendInterval: config.resend_interval,
    async send(n, signal) {
      await postJson(endpoint, alertmanagerAlerts(n, deps.clock.now(), config.resend_interval), {
        kind: 'alertmanager',
        timeoutMs: config.timeout,
        clock: deps.clock,
        idempotencyKey: n.idempotencyKey,
        ...(signal ? { signal } : {}),
      });
    },
  };
}

export const alertmanagerIntegration = defineIntegration({
  kind: 'alertmanager',
  schema: alertmanagerConfigSchema,
  secretPaths: ALERTMANAGER_SECRET_PATHS,
  create: createAlertmanagerIntegration,
});
