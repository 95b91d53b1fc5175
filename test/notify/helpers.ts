import type { Alert, Labels } from '../../src/alerts/alert.js';
import { fingerprint } from '../../src/alerts/fingerprint.js';
import { configSchema, type Config } from '../../src/config/schema.js';
import type { Integration, Notification, NotifyError } from '../../src/notify/notification.js';

/** A valid config with the given notify sections, through the real schema. */
export function notifyConfig(notify: Record<string, unknown>): Config {
  return configSchema.parse({
    sources: [{ name: 'prod', base_url: 'http://127.0.0.1:1/api', username: 'u', password: 'p' }],
    server: { listen: '127.0.0.1:9464' },
    ...notify,
  });
}

export function firing(labels: Labels, at = 0, extra: Partial<Alert> = {}): Alert {
  return {
    fingerprint: fingerprint(labels),
    labels,
    annotations: { summary: `${labels.alertname ?? ''} fires` },
    state: 'firing',
    activeAt: at,
    firedAt: at,
    values: {},
    samples: [],
    ...extra,
  };
}

export function resolved(alert: Alert, at: number): Alert {
  return { ...alert, state: 'resolved', resolvedAt: at };
}

/** An integration that records what it is given and fails as scripted. */
export class FakeIntegration implements Integration {
  readonly sent: Notification[] = [];
  attempts = 0;
  /** Each call shifts one entry: an error to throw, or undefined to succeed. */
  readonly script: Array<NotifyError | undefined> = [];

  constructor(
    readonly kind = 'webhook',
    readonly sendResolved = true,
    readonly resendInterval?: number,
  ) {}

  send(n: Notification): Promise<void> {
    this.attempts++;
    const outcome = this.script.shift();
    if (outcome) return Promise.reject(outcome);
    this.sent.push(n);
    return Promise.resolve();
  }

  /** Short form of what was sent: status and alert names/states. */
  summary(): string[] {
    return this.sent.map((n) => `${n.status}:${n.alerts.map((a) => `${a.labels.alertname}/${a.state}`).join(',')}`);
  }
}
