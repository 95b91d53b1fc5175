import { csvLine } from '../base/csv.js';
import { latenessText } from './lateness-text.js';
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
  /** The first local date the ledger judged for this rule and key (any period), or null. */
  monitoredFrom?: string | null;
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
  /** The late ones' lateness: mean and worst, whole seconds (a trend a partner scorecard shows beside the p95). */
  lateness_mean_seconds: number | null;
  lateness_max_seconds: number | null;
  /**
   * Coverage (contract section 11a): the first local date judged for this rule and key, the deadlines the period
   * owes by the calendar (those come by now), the due ones before monitoring began, and judged ÷ due.
   */
  monitored_from: string | null;
  due: number | null;
  not_monitored: number | null;
  coverage: number | null;
  /** The local dates the row covers (with `by=month`, the part of the range in its month). */
  period_from?: string;
  period_to?: string;
  /** With `by=month`: the month (`YYYY-MM`) of the row. */
  month?: string;
}

/** What a report covers and when it was made, for the CSV a partner or an auditor receives. */
export interface ReportMeta {
  from: string;
  to: string;
  createdAt: number;
}

/** Nearest-rank p95; null for none. */
function p95(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)] ?? null;
}

/** A share to 4 decimals (99.12 %): a report's figures, not floating-point noise. */
function share(v: number | null): number | null {
  return v === null ? null : Math.round(v * 10_000) / 10_000;
}

function wholeSeconds(v: number | null): number | null {
  return v === null ? null : Math.round(v);
}

/** The rows of a report's tallies, each rule's due deadlines asked once (a count of them can take a while). */
export async function reportRows(
  tallies: readonly SlaTally[],
  objective: (rule: string) => number | undefined,
  due: (rule: string) => Promise<readonly string[] | undefined> | undefined,
): Promise<SlaReportRow[]> {
  const dueOf = new Map<string, readonly string[] | undefined>();
  for (const t of tallies) if (!dueOf.has(t.rule)) dueOf.set(t.rule, await due(t.rule));
  return tallies.map((t) => reportRow(t, objective(t.rule), dueOf.get(t.rule)));
}

/**
 * A report row from a tally: on_time / (on_time + late + missing), the share of the error budget left, and with the
 * local dates of the period's due deadlines (`due`, from the rule's schedule and calendar) its coverage.
 */
export function reportRow(t: SlaTally, objective: number | undefined, due?: readonly string[]): SlaReportRow {
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
    on_time_ratio: share(ratio),
    objective: objective ?? null,
    // The share of the period's error budget (misses the objective allows) not used; negative: the SLA is missed.
    budget_remaining: share(budget === undefined || budget === 0 ? null : (budget - (t.late + t.missing)) / budget),
    lateness_p95_seconds: wholeSeconds(p95(t.latenessSeconds)),
    lateness_mean_seconds: wholeSeconds(t.latenessSeconds.length === 0 ? null : t.latenessSeconds.reduce((a, b) => a + b, 0) / t.latenessSeconds.length),
    lateness_max_seconds: wholeSeconds(t.latenessSeconds.length === 0 ? null : Math.max(...t.latenessSeconds)),
    ...coverageOf(t, due),
  };
}

function coverageOf(t: SlaTally, due: readonly string[] | undefined): Pick<SlaReportRow, 'monitored_from' | 'due' | 'not_monitored' | 'coverage'> {
  const monitoredFrom = t.monitoredFrom ?? null;
  if (due === undefined) return { monitored_from: monitoredFrom, due: null, not_monitored: null, coverage: null };
  const notMonitored = due.filter((d) => monitoredFrom === null || d < monitoredFrom).length;
  const judged = t.on_time + t.late + t.missing + t.excused;
  return { monitored_from: monitoredFrom, due: due.length, not_monitored: notMonitored, coverage: due.length === 0 ? null : share(Math.min(1, judged / due.length)) };
}

/** How a row's coverage reads to a person: "22 of 22 due judged (monitored since 2026-10-29)" or "partial: 2 of 22". */
export function coverageText(r: CoverageFields): string {
  const c = coverageCount(r);
  if (c === null) return r.monitored_from ? `monitored since ${r.monitored_from}` : '-';
  const since = r.monitored_from ? ` (monitored since ${r.monitored_from})` : ' (not monitored)';
  return `${c.short} due judged${since}`;
}

type CoverageFields = Pick<SlaReportRow, 'monitored_from' | 'due' | 'coverage' | 'on_time' | 'late' | 'missing' | 'excused'>;

/** The judged deadlines of the due ones, `18 of 18` or `partial: 2 of 22` (a cell's words); null without a schedule. */
export function coverageCount(r: CoverageFields): { short: string; partial: boolean } | null {
  if (r.due === null) return null;
  const judged = Math.min(r.due, r.on_time + r.late + r.missing + r.excused);
  return judged >= r.due ? { short: `${judged} of ${r.due}`, partial: false } : { short: `partial: ${judged} of ${r.due}`, partial: true };
}

const REPORT_FIELDS = [
  'rule',
  'key',
  'timezone',
  'on_time',
  'late',
  'missing',
  'excused',
  'no_data',
  'on_time_ratio',
  'objective',
  'budget_remaining',
  'lateness_p95_seconds',
  'lateness_mean_seconds',
  'lateness_max_seconds',
  'monitored_from',
  'due',
  'not_monitored',
  'coverage',
] as const;

/**
 * The report as CSV: a row per rule and key (and month, with `by=month`), which starts with the period it covers and
 * the time the report was made (contract section 11a), so a file handed on alone says what it is.
 */
export function reportCsv(rows: readonly SlaReportRow[], meta: ReportMeta): string {
  const header = ['period_from', 'period_to', 'created_at', ...REPORT_FIELDS];
  const created = new Date(meta.createdAt).toISOString();
  return csvLine(header) + rows.map((r) => csvLine([r.period_from ?? meta.from, r.period_to ?? meta.to, created, ...REPORT_FIELDS.map((f) => (f === 'key' ? keyText(r.key) : r[f]))])).join('');
}

/** The months (`YYYY-MM`) a range of local dates touches, each with the part of the range in it. */
export function monthsOf(from: string, to: string): Array<{ month: string; from: string; to: string }> {
  const out: Array<{ month: string; from: string; to: string }> = [];
  let [y, m] = from.slice(0, 7).split('-').map(Number) as [number, number];
  for (;;) {
    const month = `${y}-${String(m).padStart(2, '0')}`;
    if (month > to.slice(0, 7)) break;
    const last = `${month}-${String(new Date(Date.UTC(y, m, 0)).getUTCDate()).padStart(2, '0')}`;
    out.push({ month, from: from > `${month}-01` ? from : `${month}-01`, to: to < last ? to : last });
    m += 1;
    if (m > 12) {
      m = 1;
      y += 1;
    }
  }
  return out;
}


/** What a report table shows of a row (the API's rows, and the CLI's parse of them). */
export type ReportTableRow = Pick<SlaReportRow, 'rule' | 'key' | 'on_time' | 'late' | 'missing' | 'excused' | 'no_data' | 'on_time_ratio' | 'objective' | 'budget_remaining' | 'lateness_p95_seconds'> & CoverageFields;

/** The report's cells, header first: what the email, Slack and the CLI show alike (`none` for a figure there is not). */
export function reportTableCells(rows: readonly ReportTableRow[], none = '-'): string[][] {
  const pct = (v: number | null): string => (v === null ? none : `${(v * 100).toFixed(1)}%`);
  return [
    ['RULE', 'KEY', 'ON TIME', 'LATE', 'MISSING', 'EXCUSED', 'NO DATA', 'ON-TIME RATE', 'OBJECTIVE', 'BUDGET LEFT', 'LATE P95', 'COVERAGE'],
    ...rows.map((r) => [
      r.rule,
      keyText(r.key),
      String(r.on_time),
      String(r.late),
      String(r.missing),
      String(r.excused),
      String(r.no_data),
      pct(r.on_time_ratio),
      pct(r.objective),
      pct(r.budget_remaining),
      r.lateness_p95_seconds === null ? none : latenessText(r.lateness_p95_seconds),
      coverageText(r),
    ]),
  ];
}

/** The report as a plain-text table (email bodies, Slack code blocks). */
export function reportTable(rows: readonly SlaReportRow[]): string {
  const lines = reportTableCells(rows);
  const widths = lines[0]?.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length))) ?? [];
  return lines.map((l) => l.map((c, i) => (i === l.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}
