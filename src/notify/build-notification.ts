import type { Alert, Labels } from '../alerts/alert.js';
import type { AlertGroup } from './dispatch/alert-group.js';
import type { Notification } from './notification.js';

/** Where links point and in which zone times are shown: the same for every notification of one config. */
export interface NotificationSettings {
  externalUrl: string;
  displayTimezone: string;
}

/** The message data for one group and receiver: firing alerts first, then resolved ones. */
export function buildNotification(settings: NotificationSettings, receiver: string, group: AlertGroup, alerts: readonly Alert[]): Notification {
  const ordered = [...alerts.filter((a) => a.state === 'firing'), ...alerts.filter((a) => a.state !== 'firing')];
  return {
    receiver,
    groupKey: group.key,
    status: ordered.some((a) => a.state === 'firing') ? 'firing' : 'resolved',
    groupLabels: { ...group.labels },
    commonLabels: common(ordered.map((a) => a.labels)),
    commonAnnotations: common(ordered.map((a) => a.annotations)),
    alerts: ordered,
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
