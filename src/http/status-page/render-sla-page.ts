import type { ExcuseEvent, LedgerOccurrence } from '../../history/sla-ledger-store.js';
import { latenessMark, latenessText } from '../../sla/lateness-text.js';
import { mapInSlices } from '../../util/in-slices.js';
import { formatCellTime, formatTime } from '../../util/format-time.js';
import { keyText } from '../../sla/occurrence.js';
import type { SlaReportRow } from '../sla-routes.js';
import { coverageCount, coverageText } from '../../sla/sla-report.js';
import type { CalendarHolidays } from '../../sla/calendar-view.js';
import { html, wrapBetweenWords, type SafeHtml } from './safe-html.js';
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
  /** When the page was made (the daemon's clock), for the printed statement. */
  now?: number;
  /** The partner of a statement (`?key=LABEL=VALUE`): only its lines, and every occurrence with its evidence. */
  statementKey?: Record<string, string>;
  problem?: string;
}

function excusesSection(list: readonly ExcuseEvent[], timezone: string): SafeHtml {
  if (list.length === 0) return html``;
  const rows = list.map(
    (e) =>
      html`<tr><td>${formatTime(e.at, timezone)}</td><td>${e.event}</td><td>${e.rule || 'every rule'}${Object.keys(e.key).length > 0 ? html`<br><span class="muted">${keyText(e.key)}</span>` : ''}</td><td>${
        e.detail
          ? html`${e.detail.from} to ${e.detail.to}<br><span class="muted">${e.detail.judged} judged again, ${e.detail.changed} changed</span>`
          : html`${e.localDate}${e.deadline !== null ? html`<br><span class="muted">deadline ${formatTime(e.deadline, timezone)}</span>` : html`<br><span class="muted">every deadline of the day</span>`}`
      }</td><td>${e.by}</td><td>${e.reason}</td></tr>`,
  );
  return html`<section id="excuses" data-section="excuses"><h2>Excuses of the month <span class="muted">given and withdrawn, and spans judged again: who and why</span></h2><div class="scroll"><table><thead><tr><th>When</th><th>What</th><th>Rule / key</th><th>Occurrence</th><th>By</th><th>Why</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
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

/** One occurrence's mark: ✓ on time, +Nm late, ✗ missing (✗… while still open), exc excused, ? no data. */
function mark(o: LedgerOccurrence): { text: string; cls: string } {
  if (o.excuse) return { text: 'exc', cls: 'excused' };
  switch (o.outcome) {
    case 'on_time':
      return { text: '✓', cls: 'on_time' };
    case 'late':
      return { text: latenessMark(o.latenessSeconds ?? 0), cls: 'late' };
    case 'missing':
      return o.final ? { text: '✗', cls: 'missing' } : { text: '✗…', cls: 'missing open' };
    default:
      return { text: '?', cls: 'no_data' };
  }
}

function cell(list: readonly LedgerOccurrence[], day: string, today: string, monitoredFrom: string | null, rule: string, keyText: string): SafeHtml {
  if (list.length === 0) {
    // Today before its deadline is not due yet, as the days after it.
    if (day >= today) return html`<td class="day not-due" title="${day}: not due yet">·</td>`;
    // Before the ledger judged this rule and key, a day is not monitored: never "no deadline".
    if (monitoredFrom === null || day < monitoredFrom) return html`<td class="day not-monitored" title="${day}: not monitored (the ledger judges from ${monitoredFrom ?? 'no day yet'})">nm</td>`;
    return html`<td class="day none" title="${day}: no deadline">–</td>`;
  }
  // The day's worst occurrence decides its colour and its mark; a day of several deadlines says how many (✗⁴: four
  // deadlines, the worst missing), each of them in the title and behind the link. One mark a day keeps 31 days and
  // the figures of 40 partners inside 1280 px (a mark per deadline took 2,357 px).
  const worst = [...list].sort((a, b) => (SEVERITY[b.excuse ? 'excused' : b.outcome] ?? 0) - (SEVERITY[a.excuse ? 'excused' : a.outcome] ?? 0))[0] as LedgerOccurrence;
  const shown = worst.excuse ? 'excused' : worst.outcome;
  const m = mark(worst);
  const content = html`<span class="mark ${m.cls}">${m.cls === 'late' ? html`<span class="plus">+</span>${m.text.slice(1)}` : m.text}</span>${list.length > 1 ? html`<sup class="n">${list.length}</sup>` : ''}`;
  const title = list
    .map(
      (o) =>
        `${o.localDate} ${new Date(o.deadline).toISOString().slice(11, 16)} UTC ${o.outcome}${o.outcome === 'missing' && !o.final ? ' so far (open until it closes)' : ''}${o.latenessSeconds !== null ? ` (${latenessText(o.latenessSeconds)})` : ''}${o.afterClose.length > 0 ? `, ${o.afterClose.length} file(s) after the close` : ''}${o.excuse ? `, excused by ${o.excuse.by}: ${o.excuse.reason}` : ''}`,
    )
    .join('\n');
  const evidence = `/api/v1/sla/occurrences?from=${day}&to=${day}&rule=${encodeURIComponent(rule)}`;
  return html`<td class="day ${shown}" title="${title}" data-key="${keyText}"><a href="${evidence}">${content}</a></td>`;
}

const WEEKDAY_LETTERS = ['Su', 'Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa'];

/** The weekday (0 = Sunday) of a local date `YYYY-MM-DD`. */
const weekdayOf = (date: string): number => new Date(`${date}T12:00:00Z`).getUTCDay();

/** Coverage in two short lines (`18 of 18` / `since 2026-09-28`), the whole sentence as its title. */
function coverageCell(r: SlaReportRow, monthStart: string): SafeHtml {
  const count = coverageCount(r);
  const partial = count?.partial === true;
  // Short, so that 31 days and the figures fit 1280 px: the count, and since when only where monitoring began inside
  // the period (month and day); the title has the whole sentence with the year.
  const began = r.monitored_from !== null && r.monitored_from > monthStart;
  const since = r.monitored_from === null ? html`<br><span class="muted">not monitored</span>` : began ? html`<br><span class="muted">since ${r.monitored_from.slice(5)}</span>` : '';
  const judged = count ? (partial ? count.short.replace(/^partial: /, '') : count.short).replace(' of ', '/') : '';
  return html`<td class="coverage${partial ? ' bad' : ''}" title="${coverageText(r)}">${judged}${since}</td>`;
}

/** Files shown by name in a statement's line; more are counted. */
const FILES_NAMED = 3;

/** An arrival as evidence: local time in the rule's zone, to the millisecond, as the deadline beside it. */
function evidenceTime(epochMs: number, timeZone: string): string {
  return formatCellTime(epochMs, timeZone, { millis: true });
}

function outcomeText(o: LedgerOccurrence): string {
  const base =
    o.outcome === 'on_time'
      ? 'on time'
      : o.outcome === 'late'
        ? `late, ${latenessText(o.latenessSeconds ?? 0)}`
        : o.outcome === 'missing'
          ? o.final
            ? 'missing'
            : 'missing so far (open)'
          : 'no data (not counted)';
  return o.excuse ? `${base}, excused (not counted)` : base;
}

function filesText(files: readonly { file: string; at: number }[], timeZone: string): SafeHtml {
  if (files.length === 0) return html`<span class="muted">none</span>`;
  const named = files.slice(0, FILES_NAMED).map((f, i) => html`${i > 0 ? html`<br>` : ''}${wrapBetweenWords(f.file)} <span class="muted">${evidenceTime(f.at, timeZone)}</span>`);
  return html`${named}${files.length > FILES_NAMED ? html`<br><span class="muted">and ${files.length - FILES_NAMED} more</span>` : ''}`;
}

/** A partner's statement: every occurrence of the month, in deadline order, with what proves its outcome. */
function statementSection(list: readonly LedgerOccurrence[]): SafeHtml {
  if (list.length === 0) return html``;
  const sorted = [...list].sort((a, b) => a.deadline - b.deadline || a.rule.localeCompare(b.rule));
  const rows = sorted.map(
    (o) =>
      html`<tr class="${o.excuse ? 'excused' : o.outcome}"><td>${o.localDate} <span class="muted">${WEEKDAY_LETTERS[weekdayOf(o.localDate)]}</span></td><td>${wrapBetweenWords(o.rule)}</td><td>${formatCellTime(o.deadline, o.timezone)}</td><td class="outcome">${outcomeText(o)}</td><td>${o.arrivedAt !== null ? evidenceTime(o.arrivedAt, o.timezone) : html`<span class="muted">–</span>`}</td><td>${o.count}${o.minCount > 1 ? html` <span class="muted">of ${o.minCount}</span>` : ''}</td><td class="files">${filesText(o.files, o.timezone)}</td><td class="files">${o.afterClose.length > 0 ? filesText(o.afterClose, o.timezone) : html`<span class="muted">–</span>`}</td><td class="excuse">${o.excuse ? html`${o.excuse.by}: ${o.excuse.reason}` : html`<span class="muted">–</span>`}</td></tr>`,
  );
  return html`<section id="statement" data-section="statement"><h2>Every deadline of the month <span class="muted">the evidence of each outcome; times in each rule's zone</span></h2><table class="statement"><thead><tr><th>Local date</th><th>Rule</th><th>Deadline</th><th>Outcome</th><th>Arrived</th><th>Count</th><th>Files</th><th>After the close</th><th>Excuse</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** `key=LABEL=VALUE` query parameters for a key, for links. */
function keyQuery(key: Record<string, string>): string {
  return Object.entries(key)
    .map(([label, value]) => `&key=${encodeURIComponent(`${label}=${value}`)}`)
    .join('');
}

const pct = (v: number | null): string => (v === null ? '–' : `${(v * 100).toFixed(1)}%`);
/** A share as short as it reads the same: 95%, 99.5%, -120% (the goal and the budget, beside the month's 31 days). */
const shortPct = (v: number | null): string => {
  if (v === null) return '–';
  const p = v * 100;
  return `${Math.abs(p) >= 10 || Number.isInteger(p) ? Math.round(p) : p.toFixed(1)}%`;
};

/** `/sla`: per rule and key, the month by local day, with the on-time rate against the objective and the budget left. */
export async function renderSlaPage(data: SlaPageData, nonce: string): Promise<string> {
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
  const statementOf = data.statementKey ? keyText(data.statementKey) : '';
  const keyParams = data.statementKey ? keyQuery(data.statementKey) : '';
  // The grid a few lines at a time, with a turn of the event loop between them: a month of 150 partners (4,500 cells)
  // in one go held it 100 ms and more.
  const rows = await mapInSlices(data.rows, (r) => {
    const kt = keyText(r.key);
    const missed = r.objective !== null && r.on_time_ratio !== null && r.on_time_ratio < r.objective;
    const partial = r.due !== null && r.coverage !== null && r.coverage < 1;
    // Each partner's line links to its statement (on a statement already, the line names the key alone).
    const keyCell = kt ? (data.statementKey ? html`<br><span class="muted">${wrapBetweenWords(kt)}</span>` : html`<br><a class="muted" href="/sla?month=${data.month}${keyQuery(r.key)}" title="the statement of ${kt} for ${data.month}">${wrapBetweenWords(kt)}</a>`) : '';
    return html`<tr><th scope="row" class="rule">${wrapBetweenWords(r.rule)}${keyCell}</th>${data.days.map((d) => cell(byRow.get(`${r.rule}\u001f${kt}\u001f${d}`) ?? [], d, data.today, r.monitored_from, r.rule, kt))}
<td class="rate ${missed ? 'bad' : 'good'}">${pct(r.on_time_ratio)}${partial ? html`<br><span class="muted">partial</span>` : ''}</td><td title="${pct(r.objective)}">${shortPct(r.objective)}</td><td class="${r.budget_remaining !== null && r.budget_remaining < 0 ? 'bad' : ''}" title="${pct(r.budget_remaining)}">${shortPct(r.budget_remaining)}</td>${coverageCell(r, data.days[0] ?? '')}</tr>`;
  }, 25);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>transfer-watch SLA ${data.month}${statementOf ? ` ${statementOf}` : ''}</title><style nonce="${nonce}">${PAGE_STYLE}
body{max-width:none}table.sla{font-size:.68rem;border-collapse:collapse}table.sla th,table.sla td{white-space:nowrap;overflow-wrap:normal;padding:2px 2px}th.dayhead{font-weight:normal;padding:1px 2px;text-align:center}th.dayhead .wd{color:var(--muted);font-size:.85em}th.weekend{background:var(--card)}
table.sla td.coverage{font-size:.9em}table.sla th.rule{white-space:normal;min-width:7em;max-width:12em}.mark .plus{font-size:.6em;vertical-align:.15em}
table.sla td.day{text-align:center;padding:2px 0;min-width:1.6em}td.day a{color:inherit;text-decoration:none}td.day sup.n{font-size:.72em;color:var(--muted);margin-left:.05em}.mark.open{font-style:italic}
@media print{header p,footer,.notice,#excuses form{display:none}body{font-size:8pt;padding:0}table.sla{font-size:7pt}td.day,td.rate{border:1px solid #999}a{color:inherit;text-decoration:none}.print-only{display:block!important}}.print-only{display:none}td.on_time{background:#dcfce7}td.late{background:#fef3c7}td.missing{background:#fee2e2}td.excused{background:#e0e7ff}td.no_data{background:#f3f4f6}td.not-monitored{color:#6b7280;background:repeating-linear-gradient(45deg,#f9fafb,#f9fafb 3px,#e5e7eb 3px,#e5e7eb 6px)}td.rate.bad,td.bad{color:#b91c1c;font-weight:bold}
table.statement{font-size:.8rem}table.statement th,table.statement td{vertical-align:top;overflow-wrap:normal;white-space:nowrap}table.statement td.files,table.statement td.excuse{white-space:normal;max-width:22em}table.statement tr.late td.outcome{background:#fef3c7}table.statement tr.missing td.outcome{background:#fee2e2}table.statement tr.excused td.outcome{background:#e0e7ff}
@media print{table.statement{font-size:7pt}table.statement tr{break-inside:avoid}#statement h2{break-before:auto}}</style></head>
<body><header><h1>${statementOf ? html`Statement of expected files: ${statementOf}, ${data.month}` : html`Expected files: ${data.month}`}</h1><p class="print-only">Statement of expected files ${statementOf ? `of ${statementOf} ` : ''}for ${data.month}, made ${new Date(data.now ?? Date.now()).toISOString().slice(0, 16).replace('T', ' ')} UTC by transfer-watch ${data.version}: local days in each rule's time zone; the coverage column says how much of the month each line judges.</p><p class="muted"><a href="/">← status page</a>${statementOf ? html` · <a href="/sla?month=${data.month}">every partner</a>` : ''} · <a href="/sla?month=${prev}${keyParams}">← ${prev}</a> · <a href="/sla?month=${next}${keyParams}">${next} →</a> · local days in each rule's time zone · <a href="/api/v1/sla/report?from=${data.days[0] ?? ''}&amp;to=${data.days[data.days.length - 1] ?? ''}&amp;format=csv">CSV</a>${statementOf ? '' : ' · a partner’s name opens its statement'}</p></header>
<main>${data.problem ? html`<p class="notice error" role="status">${data.problem}</p>` : ''}
<section id="sla" data-section="sla">${
    data.occurrences.length === 0 && rows.length > 0 && data.today.slice(0, 7) === data.month
      ? html`<p class="notice" role="status" id="not-due">No deadline of ${data.month} has come yet: every line the rules judge is listed, its days not due. <a href="/sla?month=${prev}${keyParams}">${prev}</a> has the last month's outcomes.</p>`
      : ''
  }${
    rows.length === 0
      ? html`<p class="muted">No occurrences recorded for ${data.month}, and no rule of the ledger (a <code>missing_file</code> rule) is configured. <a href="/sla?month=${prev}${keyParams}">← ${prev}</a></p>`
      : html`<div class="scroll"><table class="sla"><thead><tr><th>Rule / key</th>${data.days.map((d) => html`<th class="dayhead${[0, 6].includes(weekdayOf(d)) ? ' weekend' : ''}">${Number(d.slice(8))}<br><span class="wd">${WEEKDAY_LETTERS[weekdayOf(d)]}</span></th>`)}<th>On time</th><th title="the objective (sla.objective)">Goal</th><th title="the error budget left">Budget</th><th title="deadlines judged of those due">Judged</th></tr></thead><tbody>${rows}</tbody></table></div>
<p class="muted">✓ on time · +45m, +3h, +2d late by that many minutes, hours or days · ✗ missing · exc excused (not counted) · ? no data (the service could not be read; not counted) · – no deadline that day · nm not monitored (before the ledger judged this rule and key; the rate covers only the judged days) · · not due yet · ✗… missing so far, still open · a day of several deadlines shows its worst, with how many (✗⁴); each day links to its occurrences and their evidence; print the page for a statement · On time against the Goal (<code>sla.objective</code>), the error Budget left, and how many due deadlines the ledger Judged since it began</p>`
  }</section>${data.statementKey ? statementSection(data.occurrences) : ''}${holidaysSection(data.holidays ?? [])}${excusesSection(data.excuseEvents ?? [], data.timezone ?? 'UTC')}</main>
<footer class="muted">transfer-watch ${data.version}</footer>
</body></html>
`.value;
}
