import type { Alert, Labels } from '../../alerts/alert.js';
import { formatDuration } from '../../base/duration.js';
import type { Notification } from '../notification.js';
import type { Escaper } from './escape.js';
import { formatTime } from '../../util/format-time.js';

/** A failed transfer as templates see it (strings escaped for the channel, time with its zone). */
export interface SampleContext {
  time: string;
  file: string;
  code: number;
  message: string;
  user: string;
  instance: string;
}

/** One alert as templates see it. */
export interface AlertContext {
  status: 'firing' | 'resolved';
  alertname: string;
  labels: Labels;
  annotations: Record<string, string>;
  summary: string;
  description: string;
  /** `key=value, ...` of the labels that are not common to the group (all of them when alone). */
  labelsText: string;
  fingerprint: string;
  /** When it became active, with zone. */
  startsAt: string;
  /**
   * It became active at its deadline (a missing file fires then): the deadline already says when, so "since"
   * would show the same instant again, in another zone when the rule's differs from the reader's.
   */
  sinceIsDeadline: boolean;
  /** When it resolved, with zone; empty while firing. */
  endsAt: string;
  /** The `runbook_url` annotation (absolute: a relative one is resolved against the external URL), or empty. */
  runbookUrl: string;
  /** error_burst: failed transfers in the window; missing_file: matching files that arrived. */
  count: number | undefined;
  /** missing_file: files expected in the window (`min_count`); undefined for other rules. */
  expected: number | undefined;
  /** True for missing_file alerts (they carry `min_count`), whose count means arrivals, not failures. */
  isMissingFile: boolean;
  /** error_burst: the window length (`10m`). */
  window: string;
  /** The window with its zone: `10m, from 2026-11-22 09:54:05 UTC to 2026-11-22 10:04:05 UTC`. */
  windowText: string;
  /** missing_file: the deadline that was missed, in the rule's zone (the zone its cron is read in), named. */
  deadline: string;
  /**
   * A phase this alert took over from, told as part of its story (`in jeopardy since 2026-11-25 07:30:00 -03:00
   * (America/Sao_Paulo)`); empty when none. The earlier phase's own resolution is then not told as a fix.
   */
  previousPhase: string;
  /** missing_file resolved: when the late file arrived, with zone. */
  arrivedAt: string;
  /** Contract 14: `ana at 2026-12-02 07:20:00 UTC: on it` while acknowledged (or when it resolved so); else empty. */
  ack: string;
  /** Rule-specific values as given by the rule (strings escaped). */
  values: Record<string, string | number>;
  /** Up to 5 sample failed transfers. */
  samples: SampleContext[];
  hasSamples: boolean;
}

/** The whole notification as templates see it. Every string from outside is already escaped. */
export interface TemplateContext {
  /**
   * `[FIRING:2] TransferErrorBurst {source=prod, user=BANK1}` or `[RESOLVED] TransferErrorBurst {...}`: the
   * labels the group's alerts share, so two groups of one alert name are never told apart by guesswork.
   */
  title: string;
  status: 'firing' | 'resolved';
  receiver: string;
  alertname: string;
  groupKey: string;
  groupLabels: Labels;
  commonLabels: Labels;
  commonAnnotations: Record<string, string>;
  /** `key=value, ...` of the common labels without alertname. */
  labelsText: string;
  externalUrl: string;
  /** Contract 14: the signed link that acknowledges the message's firing alerts (mail), or empty. */
  ackUrl: string;
  timezone: string;
  firingCount: number;
  resolvedCount: number;
  alerts: AlertContext[];
  firing: AlertContext[];
  resolved: AlertContext[];
}

export const MAX_SAMPLES = 5;

/**
 * Whether the alert's summary or description already says `text` (a deadline, a late arrival): each channel then
 * leaves its own line for it out, so every time is said once.
 */
export function alreadyTold(a: AlertContext, text: string): boolean {
  return text !== '' && (a.summary.includes(text) || a.description.includes(text));
}

/** One sample transfer as a line of text: `time  file  code N  message` (`file` as the channel marks it up). */
export function transferText(s: SampleContext, file: string = s.file): string {
  return `${s.time}  ${file}  code ${s.code}${s.message ? `  ${s.message}` : ''}`;
}

/**
 * The subject/title line shared by every channel: `[FIRING:N] alertname` / `[RESOLVED] alertname` (contract),
 * then the labels common to the group's alerts but the alert name, which identify the group.
 */
export function titleOf(n: Notification, escape: Escaper = (v) => v): string {
  const firing = n.alerts.filter((a) => a.state !== 'resolved').length;
  const name = escape(alertnameOf(n));
  const status = n.status === 'firing' ? `[FIRING:${firing}] ${name}` : `[RESOLVED] ${name}`;
  // Contract 14: an escalation says so first, and since when nobody acknowledged.
  const e = n.escalation;
  const head = e ? `[ESCALATION ${e.step}/${e.of}: unacknowledged since ${formatTime(e.since, n.displayTimezone)}] ${status}` : status;
  const labels = labelsText(n.commonLabels, new Set(['alertname']), escape);
  return labels ? `${head} {${labels}}` : head;
}

export function alertnameOf(n: Notification): string {
  return n.groupLabels.alertname ?? n.commonLabels.alertname ?? n.alerts[0]?.labels.alertname ?? 'alert';
}

/**
 * Alerts that are an earlier phase of another alert in the same notification: a resolved `phase="jeopardy"`
 * warning whose other labels are those of a firing alert (missing_file's "in jeopardy" giving way to "missing").
 * Keyed by the firing alert's fingerprint. Human channels tell them as one story; machine payloads keep both.
 */
export function supersededPhases(alerts: readonly Alert[]): Map<string, Alert> {
  const out = new Map<string, Alert>();
  const key = (labels: Labels): string =>
    JSON.stringify(
      Object.keys(labels)
        .filter((k) => k !== 'phase')
        .sort()
        .map((k) => [k, labels[k]]),
    );
  const firing = new Map(alerts.filter((a) => a.state !== 'resolved').map((a) => [key(a.labels), a]));
  for (const a of alerts) {
    if (a.state !== 'resolved' || a.labels.phase !== 'jeopardy') continue;
    const successor = firing.get(key(a.labels));
    if (successor && successor.labels.phase === undefined) out.set(successor.fingerprint, a);
  }
  return out;
}

/** Build the context for one channel: `escape` is applied to every string that came from outside. */
export function buildTemplateContext(n: Notification, escape: Escaper, opts: { foldPhases?: boolean } = {}): TemplateContext {
  const tz = n.displayTimezone;
  const commonLabels = escapeRecord(n.commonLabels, escape);
  const superseded = opts.foldPhases === false ? new Map<string, Alert>() : supersededPhases(n.alerts);
  const folded = new Set([...superseded.values()].map((a) => a.fingerprint));
  const alerts = n.alerts
    .filter((a) => !folded.has(a.fingerprint))
    .map((a) => {
      const ctx = alertContext(a, n, escape);
      const earlier = superseded.get(a.fingerprint);
      if (earlier) ctx.previousPhase = `in jeopardy since ${formatTime(earlier.firedAt ?? earlier.activeAt, tz)}`;
      return ctx;
    });
  const firing = alerts.filter((a) => a.status === 'firing');
  const resolved = alerts.filter((a) => a.status === 'resolved');
  return {
    title: titleOf(n, escape),
    status: n.status,
    receiver: escape(n.receiver),
    alertname: escape(alertnameOf(n)),
    groupKey: escape(n.groupKey),
    groupLabels: escapeRecord(n.groupLabels, escape),
    commonLabels,
    commonAnnotations: escapeRecord(n.commonAnnotations, escape),
    labelsText: labelsText(n.commonLabels, new Set(['alertname']), escape),
    externalUrl: escape(n.externalUrl),
    ackUrl: escape(n.ackUrl ?? ''),
    timezone: escape(tz),
    firingCount: firing.length,
    resolvedCount: resolved.length,
    alerts,
    firing,
    resolved,
  };
}

function alertContext(a: Alert, n: Notification, escape: Escaper): AlertContext {
  const tz = n.displayTimezone;
  const status = a.state === 'resolved' ? 'resolved' : 'firing';
  const windowMs = numberValue(a.values.window_ms);
  const count = numberValue(a.values.count);
  // Rules give instants as `<name>_ms` numbers (their `<name>` strings are in the rule's zone, not the display zone).
  const deadline = instant(a.values, 'deadline');
  // A deadline is read in the rule's zone; shown in it (formatTime names any zone but UTC).
  const ruleZone = typeof a.values.timezone === 'string' && a.values.timezone !== '' ? a.values.timezone : tz;
  const arrivedAt = instant(a.values, 'arrived_at');
  const expected = numberValue(a.values.min_count);
  const windowEnd = instant(a.values, 'window_end') ?? deadline ?? a.firedAt ?? a.activeAt;
  const windowStart = instant(a.values, 'window_start') ?? (windowMs !== undefined ? windowEnd - windowMs : undefined);
  // Every alert line names all its labels: a line copied into a ticket or chat must still say which alert it is.
  const skip = new Set(['alertname']);
  return {
    status,
    alertname: escape(a.labels.alertname ?? alertnameOf(n)),
    labels: escapeRecord(a.labels, escape),
    annotations: escapeRecord(a.annotations, escape),
    summary: escape(a.annotations.summary ?? ''),
    description: escape(a.annotations.description ?? ''),
    labelsText: labelsText(a.labels, skip, escape),
    fingerprint: escape(a.fingerprint),
    startsAt: formatTime(a.firedAt ?? a.activeAt, tz),
    sinceIsDeadline: deadline !== undefined && Math.abs((a.firedAt ?? a.activeAt) - deadline) < 60_000,
    endsAt: status === 'resolved' && a.resolvedAt !== undefined ? formatTime(a.resolvedAt, tz) : '',
    runbookUrl: escape(a.annotations.runbook_url ?? ''),
    count,
    expected,
    isMissingFile: expected !== undefined,
    window: windowMs !== undefined ? formatDuration(windowMs) : '',
    windowText:
      windowMs !== undefined && windowStart !== undefined
        ? `${formatDuration(windowMs)}, from ${formatTime(windowStart, tz)} to ${formatTime(windowEnd, tz)}`
        : '',
    deadline: deadline !== undefined ? formatTime(deadline, ruleZone) : '',
    previousPhase: '',
    arrivedAt: arrivedAt !== undefined ? formatTime(arrivedAt, tz) : '',
    ack: a.ack ? `${escape(a.ack.by)} at ${formatTime(a.ack.at, tz)}${a.ack.comment ? `: ${escape(a.ack.comment)}` : ''}` : '',
    values: Object.fromEntries(
      Object.entries(a.values).map(([k, v]) => [k, typeof v === 'string' ? escape(v) : v]),
    ),
    samples: a.samples.slice(0, MAX_SAMPLES).map((s) => ({
      time: formatTime(s.time, tz),
      file: escape(s.file),
      code: s.code,
      message: escape(s.message),
      user: escape(s.user),
      instance: escape(s.instance),
    })),
    hasSamples: a.samples.length > 0,
  };
}

function instant(values: Record<string, number | string>, name: string): number | undefined {
  return numberValue(values[`${name}_ms`]) ?? numberValue(values[name]);
}

function numberValue(v: number | string | undefined): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function escapeRecord(record: Record<string, string>, escape: Escaper): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, escape(v)]));
}

function labelsText(labels: Labels, skip: Set<string>, escape: Escaper): string {
  return Object.keys(labels)
    .filter((k) => !skip.has(k))
    .sort()
    .map((k) => `${escape(k)}=${escape(labels[k] ?? '')}`)
    .join(', ');
}
