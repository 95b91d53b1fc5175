import type { Alert, Labels } from '../alerts/alert.js';
import { formatDuration } from '../base/duration.js';
import type { Config } from '../config/schema.js';
import type { RouteConfig } from '../notify/dispatch/route-schema.js';
import { matchesAll, parseMatchers, type Matcher } from '../notify/matcher.js';
import type { AlertStatus } from '../notify/mute/mute-stage.js';
import type { Silence } from '../notify/mute/silence.js';
import type { AlertmanagerAlertQuery, AlertmanagerView } from '../http/daemon-api.js';
import { TransferWatchError } from '../util/errors.js';
import { compileLinearRegex, type LinearRegex } from '../util/linear-regex.js';

/** Alertmanager's default resolve_timeout: the `endsAt` it shows for an alert that has none. */
const RESOLVE_TIMEOUT_MS = 5 * 60_000;

export interface AlertmanagerViewSource {
  now(): number;
  startedAt: number;
  version: string;
  config(): Config;
  /** Firing alerts (pending and resolved ones are not Alertmanager alerts). */
  firingAlerts(): Alert[];
  status(alert: Alert): AlertStatus;
  receiversOf(alert: Alert): string[];
  groups(): Array<{ labels: Labels; receiver: string; alerts: Alert[] }>;
  silences(): Silence[];
}

/** An alert in Alertmanager's v2 shape (gettableAlert). */
export interface GettableAlert {
  labels: Labels;
  annotations: Record<string, string>;
  receivers: Array<{ name: string }>;
  fingerprint: string;
  startsAt: string;
  updatedAt: string;
  endsAt: string;
  generatorURL: string;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; silencedBy: string[]; inhibitedBy: string[]; mutedBy: string[] };
}

/**
 * transfer-watch's alerts, groups, silences and status in the shapes of Alertmanager's API v2, so amtool and
 * Grafana's Alertmanager data source read them as they read an Alertmanager. Filters follow Alertmanager:
 * `filter` matchers must all match an alert's labels; for silences, each must match one of the silence's
 * own matchers of the same name; `receiver` is an anchored regex.
 */
export function createAlertmanagerView(source: AlertmanagerViewSource): AlertmanagerView {
  function gettable(alert: Alert): GettableAlert {
    const s = source.status(alert);
    const suppressed = s.silencedBy.length > 0 || s.inhibitedBy.length > 0 || s.mutedBy.length > 0;
    const startsAt = alert.firedAt ?? alert.activeAt;
    const now = source.now();
    return {
      labels: alert.labels,
      annotations: alert.annotations,
      receivers: source.receiversOf(alert).map((name) => ({ name })),
      fingerprint: alert.fingerprint,
      startsAt: new Date(startsAt).toISOString(),
      updatedAt: new Date(now).toISOString(),
      endsAt: new Date(now + RESOLVE_TIMEOUT_MS).toISOString(),
      generatorURL: '',
      status: { state: suppressed ? 'suppressed' : 'active', silencedBy: s.silencedBy, inhibitedBy: s.inhibitedBy, mutedBy: s.mutedBy },
    };
  }

  function keep(a: GettableAlert, q: AlertmanagerAlertQuery, filter: Matcher[], receiver: LinearRegex | undefined): boolean {
    if (!matchesAll(filter, a.labels)) return false;
    if (receiver && !a.receivers.some((r) => receiver.matches(r.name))) return false;
    if (!q.active && a.status.state === 'active') return false;
    if (!q.silenced && a.status.silencedBy.length > 0) return false;
    if (!q.inhibited && a.status.inhibitedBy.length > 0) return false;
    if (q.muted === false && a.status.mutedBy.length > 0) return false;
    return true;
  }

  return {
    status: () => ({
      cluster: { status: 'disabled', peers: [] },
      versionInfo: { version: source.version, revision: '', branch: '', buildUser: 'transfer-watch', buildDate: '', goVersion: `node ${process.version}` },
      config: { original: routingYaml(source.config()) },
      uptime: new Date(source.startedAt).toISOString(),
    }),
    receivers: () => source.config().receivers.map((r) => ({ name: r.name })),
    alerts: (q) => {
      const filter = matchersOf(q.filter);
      const receiver = receiverRegex(q.receiver);
      return source
        .firingAlerts()
        .map(gettable)
        .filter((a) => keep(a, q, filter, receiver));
    },
    alertGroups: (q) => {
      const filter = matchersOf(q.filter);
      const receiver = receiverRegex(q.receiver);
      return source
        .groups()
        .filter((g) => !receiver || receiver.matches(g.receiver))
        .map((g) => ({
          labels: g.labels,
          receiver: { name: g.receiver },
          alerts: g.alerts.map(gettable).filter((a) => keep(a, q, filter, undefined)),
        }))
        .filter((g) => g.alerts.length > 0);
    },
    silences: (filterTexts) => {
      const filter = matchersOf(filterTexts);
      return source
        .silences()
        .filter((s) => filter.every((f) => s.matchers.some((m) => m.name === f.name && matchesAll([f], { [f.name]: m.value }))))
        .map((s) => ({ ...s, annotations: {} }));
    },
  };
}

function matchersOf(texts: readonly string[]): Matcher[] {
  return texts.flatMap((t) => parseMatchers(t));
}

function receiverRegex(text: string | undefined): LinearRegex | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    return compileLinearRegex(text);
  } catch (err) {
    throw new TransferWatchError('matcher_invalid', `receiver: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * What `config.original` shows: the routing tree and the receiver names in Alertmanager's YAML, never a
 * receiver's settings (they hold webhook URLs and passwords). Grafana draws its routing view from it.
 */
function routingYaml(config: Config): string {
  const lines: string[] = ['# transfer-watch: routing tree only; receiver settings are not exposed', 'route:'];
  const route = (r: RouteConfig, indent: string): void => {
    if (r.receiver) lines.push(`${indent}receiver: ${JSON.stringify(r.receiver)}`);
    if (r.group_by) lines.push(`${indent}group_by: ${JSON.stringify(r.group_by)}`);
    if (r.matchers.length > 0) lines.push(`${indent}matchers: ${JSON.stringify(r.matchers)}`);
    if (r.continue) lines.push(`${indent}continue: true`);
    if (r.group_wait !== undefined) lines.push(`${indent}group_wait: ${formatDuration(r.group_wait)}`);
    if (r.group_interval !== undefined) lines.push(`${indent}group_interval: ${formatDuration(r.group_interval)}`);
    if (r.repeat_interval !== undefined) lines.push(`${indent}repeat_interval: ${formatDuration(r.repeat_interval)}`);
    if (r.routes.length > 0) {
      lines.push(`${indent}routes:`);
      for (const child of r.routes) {
        lines.push(`${indent}  -`);
        route(child, `${indent}    `);
      }
    }
  };
  if (config.route) route(config.route, '  ');
  lines.push('receivers:');
  for (const r of config.receivers) lines.push(`  - name: ${JSON.stringify(r.name)}`);
  return `${lines.join('\n')}\n`;
}
