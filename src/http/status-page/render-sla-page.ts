import type { ExcuseEvent, LedgerOccurrence } from '../../history/sla-ledger-store.js';
import { formatTime } from '../../util/format-time.js';
import { keyText } from '../../sla/occurrence.js';
import type { SlaReportRow } from '../sla-routes.js';
import { coverageText } from '../../sla/sla-report.js';
import type { CalendarHolidays } from '../../sla/calendar-view.js';
import { html, type SafeHtml } from './safe-html.js';
import { PAGE_STYLE } from './page-style.js';

export interface SlaPageData {
  /** `YYYY-MM`. */
  month: string;
  /** Local dates of the month, in order. */
  days: string[];
  /** The month's report rows, per rule and key. */
  rows: SlaReportRow[];
  occurrences: LedgerOccurrence[];
  version: string;
  /** Local date today in the display zone: later days are "not due". */
  today: string;
  /** The counted holidays of the month of each calendar the rules read. */
  holidays?: CalendarHolidays[];
  /** The excuses given and withdrawn for the month's dates (the audit trail), newest first. */
  excuseEvents?: ExcuseEvent[];
  timezone?: string;
  problem?: string;
}

function excusesSection(list: readonly ExcuseEvent[], timezone: string): SafeHtml {
  if (list.length === 0) return html``;
  const rows = list.map(
    (e) =>
      html`<tr><td>${formatTime(e.at, timezone)}</td><td>${e.event}</td><td>${e.rule}${Object.keys(e.key).length > 0 ? html`<br><span class="muted">${keyText(e.key)}</span>` : ''}</td><td>${e.localDate}${e.deadline !== null ? html`<br><span class="muted">deadline ${formatTime(e.deadline, timezone)}</span>` : html`<br><span class="muted">every deadline of the day</span>`}</td><td>${e.by}</td><td>${e.reason}</td></tr>`,
  );
  return html`<section id="excuses" data-section="excuses"><h2>Excuses of the month <span class="muted">given and withdrawn, who and why</span></h2><div class="scroll"><table><thead><tr><th>When</th><th>What</th><th>Rule / key</th><th>Occurrence</th><th>By</th><th>Why</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

function holidaysSection(list: readonly CalendarHolidays[]): SafeHtml {
  if (list.length === 0) return html``;
  const items = list.map(
    (c) =>
      html`<li><strong>${c.calendar}</strong> <span class="muted">(${c.rules.join(', ')})</span>: ${c.holidays.map(
        (h, i) => html`${i > 0 ? ' · ' : ''}${h.date} ${h.name}${h.source === 'correction' ? html` <span class="muted">(a correction of the holiday library)</span>` : ''}`,
      )}</li>`,
  );
  return html`<section id="holidays" data-section="holidays"><h2>Holidays this month</h2><p class="muted">No file is expected on these days of each calendar (<code>transfer-watch calendar show NAME</code> lists a year).</p><ul>${items}</ul></section>`;
}

const SEVERITY: Record<string, number> = { missing: 5, late: 4, no_data: 3, excused: 2, on_time: 1 };

function cell(list: readonly LedgerOccurrence[], day: string, today: string, monitoredFrom: string | null): SafeHtml {
  if (list.length === 0) {
    if (day > today) return html`<td class="day not-due" title="${day}: not due">·</td>`;
    // Before the ledger judged this rule and key, a day is not monitored: never "no deadline".
    if (monitoredFrom === null || day < monitoredFrom) return html`<td class="day not-monitored" title="${day}: not monitored (the ledger judges from ${monitoredFrom ?? 'no day yet'})">nm</td>`;
    return html`<td class="day none" title="${day}: no deadline">–</td>`;
  }
  const shown = list.map((o) => (o.excuse ? 'excused' : o.outcome)).sort((a, b) => (SEVERITY[b] ?? 0) - (SEVERITY[a] ?? 0))[0] ?? 'on_time';
  const worst = list.find((o) => (o.excuse ? 'excused' : o.outcome) === shown);
  const text =
    shown === 'on_time'
      ? '✓'
      : shown === 'late'
        ? `+${Math.max(1, Math.round((worst?.latenessSeconds ?? 0) / 60))}m`
        : shown === 'missing'
          ? '✗'
          : shown === 'excused'
            ? 'exc'
            : '?';
  const title = list
    .map((o) => `${o.localDate} ${o.outcome}${o.latenessSeconds !== null ? ` (late by ${Math.round(o.latenessSeconds / 60)} min)` : ''}${o.excuse ? `, excused by ${o.excuse.by}: ${o.excuse.reason}` : ''}`)
    .join('\n');
  return html`<td class="day ${shown}" title="${title}">${text}</td>`;
}

const pct = (v: number | null): string => (v === null ? '–' : `${(v * 100).toFixed(1)}%`);

/** `/sla`: per rule and key, the month by local day, with the on-time rate against the objective and the budget left. */
export function renderSlaPage(data: SlaPageData, nonce: string): string {
  const byRow = new Map<string, LedgerOccurrence[]>();
  for (const o of data.occurrences) {
    const id = `${o.rule}\u001f${o.keyText}\u001f${o.localDate}`;
    const list = byRow.get(id);
    if (list) list.push(o);
    else byRow.set(id, [o]);
  }
  const [y, m] = data.month.split('-').map(Number) as [number, number];
  const prev = m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
  const next = m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
  const rows = data.rows.map((r) => {
    const kt = keyText(r.key);
    const missed = r.objective !== null && r.on_time_ratio !== null && r.on_time_ratio < r.objective;
    const partial = r.due !== null && r.coverage !== null && r.coverage < 1;
    return html`<tr><th scope="row" class="rule">${r.rule}${kt ? html`<br><span class="muted">${kt}</span>` : ''}</th>${data.days.map((d) => cell(byRow.get(`${r.rule}\u001f${kt}\u001f${d}`) ?? [], d, data.today, r.monitored_from))}
<td class="rate ${missed ? 'bad' : 'good'}">${pct(r.on_time_ratio)}${partial ? html`<br><span class="muted">partial</span>` : ''}</td><td>${pct(r.objective)}</td><td class="${r.budget_remaining !== null && r.budget_remaining < 0 ? 'bad' : ''}">${pct(r.budget_remaining)}</td><td class="coverage${partial ? ' bad' : ''}">${coverageText(r)}</td></tr>`;
  });
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>transfer-watch SLA ${data.month}</title><style nonce="${nonce}">${PAGE_STYLE}
td.day{text-align:center;font-size:.8em;padding:2px 3px}td.on_time{background:#dcfce7}td.late{background:#fef3c7}td.missing{background:#fee2e2}td.excused{background:#e0e7ff}td.no_data{background:#f3f4f6}td.not-monitored{color:#6b7280;background:repeating-linear-gradient(45deg,#f9fafb,#f9fafb 3px,#e5e7eb 3px,#e5e7eb 6px)}td.rate.bad,td.bad{color:#b91c1c;font-weight:bold}</style></head>
<body><header><h1>Expected files: ${data.month}</h1><p class="muted"><a href="/">← status page</a> · <a href="/sla?month=${prev}">← ${prev}</a> · <a href="/sla?month=${next}">${next} →</a> · local days in each rule's time zone · <a href="/api/v1/sla/report?from=${data.days[0] ?? ''}&amp;to=${data.days[data.days.length - 1] ?? ''}&amp;format=csv">CSV</a></p></header>
<main>${data.problem ? html`<p class="notice error" role="status">${data.problem}</p>` : ''}
<section id="sla" data-section="sla">${
    rows.length === 0
      ? html`<p class="muted">No occurrences recorded for ${data.month}.</p>`
      : html`<div class="scroll"><table class="sla"><thead><tr><th>Rule / key</th>${data.days.map((d) => html`<th>${Number(d.slice(8))}</th>`)}<th>On time</th><th>Objective</th><th>Budget left</th><th>Coverage</th></tr></thead><tbody>${rows}</tbody></table></div>
<p class="muted">✓ on time · +Nm late by N minutes · ✗ missing · exc excused (not counted) · ? no data (the service could not be read; not counted) · – no deadline that day · nm not monitored (before the ledger judged this rule and key; the rate covers only the judged days) · · not due yet</p>`
  }</section>${holidaysSection(data.holidays ?? [])}${excusesSection(data.excuseEvents ?? [], data.timezone ?? 'UTC')}</main>
<footer class="muted">transfer-watch ${data.version}</footer>
</body></html>
`.value;
}
