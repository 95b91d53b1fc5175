import type { Alert } from '../../../src/alerts/alert.js';
import { fingerprint } from '../../../src/alerts/fingerprint.js';
import type { Notification } from '../../../src/notify/notification.js';

export const T0 = Date.UTC(2026, 10, 22, 13, 4, 5); // 2026-11-22T13:04:05Z

export function burstAlert(overrides: Partial<Alert> = {}): Alert {
  const { labels: extraLabels, ...rest } = overrides;
  const labels = {
    alertname: 'TransferErrorBurst',
    source: 'prod',
    mft_instance: 'PROD1',
    user: 'BANK1',
    severity: 'critical',
    ...extraLabels,
  };
  return {
    fingerprint: fingerprint(labels),
    labels,
    annotations: { summary: '7 failed transfers for BANK1 in 10m' },
    state: 'firing',
    activeAt: T0 - 60_000,
    firedAt: T0,
    values: { count: 7, threshold: 5, window_ms: 600_000 },
    samples: [
      { time: T0 - 1000, file: '<!channel>.RET', code: 12, message: 'connection <reset>', user: 'BANK1', instance: 'PROD1' },
      { time: T0 - 2000, file: 'PAY_002.RET', code: 12, message: 'timeout', user: 'BANK1', instance: 'PROD1' },
    ],
    ...rest,
  };
}

export function notificationOf(alerts: Alert[], overrides: Partial<Notification> = {}): Notification {
  const firing = alerts.some((a) => a.state !== 'resolved');
  const first = alerts[0];
  return {
    receiver: 'oncall',
    groupKey: '{}:{alertname="TransferErrorBurst"}',
    status: firing ? 'firing' : 'resolved',
    groupLabels: { alertname: first?.labels.alertname ?? 'x' },
    commonLabels: first ? { ...first.labels } : {},
    commonAnnotations: first ? { ...first.annotations } : {},
    alerts,
    externalUrl: 'http://transfer-watch.example:9464',
    displayTimezone: 'UTC',
    ...overrides,
  };
}
