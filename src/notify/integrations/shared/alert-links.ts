import type { Alert, Labels } from '../../../alerts/alert.js';
import type { Notification } from '../../notification.js';

/** Alertmanager's zero time: what its webhook payload shows as `endsAt` of a firing alert. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** A link back to the daemon for one alert (`generatorURL`); empty when no external URL is known. */
export function generatorUrl(n: Notification, alert: Alert): string {
  if (!n.externalUrl) return '';
  try {
    const url = new URL('api/v1/alerts', n.externalUrl.endsWith('/') ? n.externalUrl : `${n.externalUrl}/`);
    url.searchParams.set('fingerprint', alert.fingerprint);
    return url.toString();
  } catch {
    return '';
  }
}

/** Alertmanager drops empty label values anyway (they mean "absent"); leaving them out keeps identities equal. */
export function nonEmptyLabels(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== ''));
}
