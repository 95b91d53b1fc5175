/**
 * How fast people respond (contract 14): per firing of an alert, the time from firing to its first acknowledgement
 * (MTTA) and to its resolution (MTTR), grouped by alert name, receiver or partner (`user`), with p50 and p95. Read
 * from the alerts' timelines in the history (firing, acknowledged, escalated, resolved events).
 */

export const ONCALL_GROUPINGS = ['alertname', 'receiver', 'user'] as const;
export type OncallGrouping = (typeof ONCALL_GROUPINGS)[number];

/** One event of an alert's timeline, as the report needs it. */
export interface OncallEvent {
  fingerprint: string;
  at: number;
  event: string;
  labels: Record<string, string>;
}

export interface OncallRow {
  group: string;
  /** Firings of alerts that began in the span. */
  alerts: number;
  acknowledged: number;
  escalated: number;
  mtta_seconds: { p50: number | null; p95: number | null };
  mttr_seconds: { p50: number | null; p95: number | null };
}

/** One firing of one alert: from its `firing` event to its `resolved` one. */
export interface Firing {
  fingerprint: string;
  labels: Record<string, string>;
  firedAt: number;
  ackAt: number | undefined;
  resolvedAt: number | undefined;
  escalated: boolean;
}

/** The firings that began in [from, to], from the events of each alert (in any order). */
export function firingsOf(events: readonly OncallEvent[], from: number, to: number): Firing[] {
  const byAlert = new Map<string, OncallEvent[]>();
  for (const e of events) {
    const list = byAlert.get(e.fingerprint);
    if (list) list.push(e);
    else byAlert.set(e.fingerprint, [e]);
  }
  const out: Firing[] = [];
  for (const list of byAlert.values()) {
    list.sort((a, b) => a.at - b.at);
    let current: Firing | undefined;
    for (const e of list) {
      if (e.event === 'firing') {
        if (current) out.push(current);
        current = { fingerprint: e.fingerprint, labels: e.labels, firedAt: e.at, ackAt: undefined, resolvedAt: undefined, escalated: false };
      } else if (current) {
        if (e.event === 'acknowledged') current.ackAt ??= e.at;
        else if (e.event === 'escalated') current.escalated = true;
        else if (e.event === 'resolved') {
          current.resolvedAt = e.at;
          out.push(current);
          current = undefined;
        }
      }
    }
    if (current) out.push(current);
  }
  return out.filter((f) => f.firedAt >= from && f.firedAt <= to).sort((a, b) => a.firedAt - b.firedAt || a.fingerprint.localeCompare(b.fingerprint));
}

/** The nearest-rank percentile of `values` (seconds), or null without any. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

/**
 * The rows of the report, by group name. `receivers` names the receivers that were first told of each alert (by
 * fingerprint): the grouping by receiver counts an alert under each of them; an alert no receiver was told of is
 * under "". The most firings first.
 */
export function oncallRows(firings: readonly Firing[], by: OncallGrouping, receivers: ReadonlyMap<string, readonly string[]> = new Map()): OncallRow[] {
  const groups = new Map<string, Firing[]>();
  for (const f of firings) {
    const names = by === 'receiver' ? (receivers.get(f.fingerprint) ?? ['']) : [f.labels[by] ?? ''];
    for (const name of names.length > 0 ? names : ['']) {
      const list = groups.get(name);
      if (list) list.push(f);
      else groups.set(name, [f]);
    }
  }
  const seconds = (ms: number): number => Math.round(ms / 100) / 10;
  return [...groups.entries()]
    .map(([group, list]) => {
      const tta = list.flatMap((f) => (f.ackAt !== undefined ? [seconds(f.ackAt - f.firedAt)] : []));
      const ttr = list.flatMap((f) => (f.resolvedAt !== undefined ? [seconds(f.resolvedAt - f.firedAt)] : []));
      return {
        group,
        alerts: list.length,
        acknowledged: tta.length,
        escalated: list.filter((f) => f.escalated).length,
        mtta_seconds: { p50: percentile(tta, 50), p95: percentile(tta, 95) },
        mttr_seconds: { p50: percentile(ttr, 50), p95: percentile(ttr, 95) },
      };
    })
    .sort((a, b) => b.alerts - a.alerts || a.group.localeCompare(b.group));
}

/** `4m 05s`, `1h 12m`, `2d 03h`, or `-` without any. */
export function spanText(seconds: number | null): string {
  if (seconds === null) return '-';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d ${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}
