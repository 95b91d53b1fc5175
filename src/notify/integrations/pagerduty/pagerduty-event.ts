import { hash } from 'node:crypto';
import { escapePlain } from '../../templates/escape.js';
import { buildTemplateContext, titleOf } from '../../templates/template-context.js';
import { alertLines, plainStyle } from '../../templates/default-text.js';
import type { Notification } from '../../notification.js';
import type { PagerdutyConfig } from './pagerduty-schema.js';

/** PagerDuty's limits: a dedup_key of at most 255 characters, a summary of at most 1024. */
const MAX_DEDUP_KEY = 255;
const MAX_SUMMARY = 1024;
const SEVERITIES = new Set(['critical', 'error', 'warning', 'info']);

/**
 * One alert group is one incident: dedup_key is the group key (hashed when longer than PagerDuty takes), so
 * a repeat updates the open incident and RESOLVED closes it.
 */
export function pagerdutyDedupKey(groupKey: string): string {
  return groupKey.length <= MAX_DEDUP_KEY ? groupKey : hash('sha256', groupKey, 'hex');
}

/** The Events API v2 body of one notification: `trigger` while any alert fires, `resolve` once none does. */
export function pagerdutyEvent(n: Notification, config: PagerdutyConfig, now: number): Record<string, unknown> {
  const dedupKey = pagerdutyDedupKey(n.groupKey);
  if (n.status === 'resolved') return { routing_key: config.routing_key, event_action: 'resolve', dedup_key: dedupKey };
  const ctx = buildTemplateContext(n, escapePlain);
  const summary = titleOf(n, escapePlain);
  const label = n.commonLabels.severity;
  const severity = config.severity ?? (label !== undefined && SEVERITIES.has(label) ? label : 'error');
  const runbooks = [...new Set(n.alerts.map((a) => a.annotations.runbook_url).filter((u): u is string => !!u))];
  return {
    routing_key: config.routing_key,
    event_action: 'trigger',
    dedup_key: dedupKey,
    payload: {
      summary: summary.length > MAX_SUMMARY ? `${summary.slice(0, MAX_SUMMARY - 1)}…` : summary,
      source: config.source ?? n.commonLabels.source ?? 'transfer-watch',
      severity,
      timestamp: new Date(now).toISOString(),
      ...(config.component ? { component: config.component } : {}),
      ...(config.class ? { class: config.class } : {}),
      group: n.groupLabels.alertname ?? '',
      custom_details: {
        firing: ctx.firing.map((a) => alertLines(a, plainStyle).join('\n')),
        ...(ctx.resolved.length > 0 ? { resolved: ctx.resolved.map((a) => alertLines(a, plainStyle).join('\n')) } : {}),
        group_labels: n.groupLabels,
        common_labels: n.commonLabels,
        timezone: n.displayTimezone,
      },
    },
    client: 'transfer-watch',
    ...(n.externalUrl ? { client_url: n.externalUrl } : {}),
    links: [
      ...(n.externalUrl ? [{ href: n.externalUrl, text: 'transfer-watch' }] : []),
      ...runbooks.map((href) => ({ href, text: 'Runbook' })),
    ],
  };
}
