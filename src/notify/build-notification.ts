import type { Alert, Labels } from '../alerts/alert.js';
import type { AlertGroup } from './dispatch/alert-group.js';
import type { Notification } from './notification.js';

/** Where links point and in which zone times are shown: the same for every notification of one config. */
export interface NotificationSettings {
  externalUrl: string;
  displayTimezone: string;
}

/** The message data for one group and receiver: firing alerts first, then resolved ones. */
export function buildNotification(settings: NotificationSettings, receiver: string, group: Pick<AlertGroup, 'key' | 'labels'>, alerts: readonly Alert[]): Notification {
  const ordered = [...alerts.filter((a) => a.state === 'firing'), ...alerts.filter((a) => a.state !== 'firing')];
  return {
    receiver,
    groupKey: group.key,
    status: ordered.some((a) => a.state === 'firing') ? 'firing' : 'resolved',
    groupLabels: { ...group.labels },
    commonLabels: common(ordered.map((a) => a.labels)),
    commonAnnotations: common(ordered.map((a) => withRunbookLink(a, settings.externalUrl).annotations)),
    alerts: ordered.map((a) => withRunbookLink(a, settings.externalUrl)),
    externalUrl: settings.externalUrl,
    displayTimezone: settings.displayTimezone,
  };
}

function common(records: ReadonlyArray<Record<string, string>>): Labels {
  const [first, ...rest] = records;
  if (!first) return {};
  const out: Labels = {};
  for (const [name, value] of Object.entries(first)) if (rest.every((r) => r[name] === value)) out[name] = value;
  return out;
}

/**
 * `runbook_url` as a link every channel can show: a relative one (`/runbooks/...`, served by the daemon) is
 * made absolute against the external URL; anything but http(s) is dropped, so a templated value can never
 * become a `javascript:` link in a mail or on the page.
 */
function withRunbookLink(alert: Alert, externalUrl: string): Alert {
  const raw = alert.annotations.runbook_url;
  if (raw === undefined) return alert;
  let link: string | undefined;
  try {
    const url = new URL(raw, externalUrl ? `${externalUrl.replace(/\/+$/, '')}/` : undefined);
    if (url.protocol === 'http:' || url.protocol === 'https:') link = url.toString();
  } catch {
    link = undefined;
  }
  const annotations = { ...alert.annotations };
  if (link === undefined) delete annotations.runbook_url;
  else annotations.runbook_url = link;
  return { ...alert, annotations };
}
