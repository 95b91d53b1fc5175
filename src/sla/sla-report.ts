import { csvLine } from '../base/csv.js';
import { keyText } from './occurrence.js';

/** Per rule and key over a range of local dates (HistoryStore's ledger tallies fit). */
export interface SlaTally {
  rule: string;
  key: Record<string, string>;
  timezone: string;
  on_time: number;
  late: number;
  missing: number;
  excused: number;
  no_data: number;
  latenessSeconds: number[];
}

export interface SlaReportRow {
  rule: string;
  key: Record<string, string>;
  timezone: string;
  on_time: number;
  late: number;
  missing: number;
  excused: number;
  no_data: number;
  on_time_ratio: number | null;
  objective: number | null;
  budget_remaining: number | null;
  lateness_p95_seconds: number | null;
}

/** Nearest-rank p95; null for none. */
function p95(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)] ?? null;
}

/** A report row from a tally: on_time / (on_time + late + missing), and the share of the error budget left. */
export function reportRow(t: SlaTally, objective: number | undefined): SlaReportRow {
  const denominator = t.on_time + t.late + t.missing;
  const ratio = denominator === 0 ? null : t.on_time / denominator;
  const budget = objective === undefined || denominator === 0 ? undefined : (1 - objective) * denominator;
  return {
    rule: t.rule,
    key: t.key,
    timezone: t.timezone,
    on_time: t.on_time,
    late: t.late,
    missing: t.missing,
    excused: t.excused,
    no_data: t.no_data,
    on_time_ratio: ratio,
    objective: objective ?? null,
    // The share of the period's error budget (misses the objective allows) not used; negative: the SLA is missed.
    budget_remaining: budget === undefined || budget === 0 ? null : (budget - (t.late + t.missing)) / budget,
    lateness_p95_seconds: p95(t.latenessSeconds),
  };
}

const REPORT_FIELDS = ['rule', 'key', 'timezone', 'on_time', 'late', 'missing', 'excused', 'no_data', 'on_time_ratio', 'objective', 'budget_remaining', 'lateness_p95_seconds'] as const;

export function reportCsv(rows: readonly SlaReportRow[]): string {
  return csvLine([...REPORT_FIELDS]) + rows.map((r) => csvLine(REPORT_FIELDS.map((f) => (f === 'key' ? keyText(r.key) : r[f])))).join('');
}


/** The report as a plain-text table (email bodies, Slack code blocks, the CLI). */
export function reportTable(rows: readonly SlaReportRow[]): string {
  const pct = (v: number | null): string => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
  const lines = [
    ['RULE', 'KEY', 'ON TIME', 'LATE', 'MISSING', 'EXCUSED', 'NO DATA', 'ON-TIME RATE', 'OBJECTIVE', 'BUDGET LEFT'],
    ...rows.map((r) => [r.rule, keyText(r.key), String(r.on_time), String(r.late), String(r.missing), String(r.excused), String(r.no_data), pct(r.on_time_ratio), pct(r.objective), pct(r.budget_remaining)]),
  ];
  const widths = lines[0]?.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length))) ?? [];
  return lines.map((l) => l.map((c, i) => (i === l.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}
