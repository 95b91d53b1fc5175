import { ISO_WEEKDAY_NAMES, type DiscoverReport, type FlowReport } from '../../flows/discover-flows.js';
import { proposalYaml } from '../../flows/flow-report-format.js';
import { html, type SafeHtml } from './safe-html.js';
import { PAGE_STYLE } from './page-style.js';

export interface FlowsPageData {
  timezone: string;
  version: string;
  report?: DiscoverReport;
  /** Why there is nothing to show (history disabled, database down). */
  problem?: string;
}


function schedule(f: FlowReport): string {
  const s = f.schedule;
  if (s.kind === 'monthly') return s.month_day === 'last' ? 'the last day of each month' : `day ${s.month_day} of each month`;
  const days = s.weekdays.length === 7 ? 'every day' : s.kind === 'weekly' ? `every ${ISO_WEEKDAY_NAMES[s.weekdays[0] ?? 0]}` : s.weekdays.map((d) => ISO_WEEKDAY_NAMES[d]).join(', ');
  return s.calendar !== null ? `${days}, business days of ${s.calendar}` : days;
}

function flowRow(f: FlowReport, report: DiscoverReport): SafeHtml {
  const one: DiscoverReport = { ...report, flows: [f] };
  // A flow learned in its own clock (contract 13a) says so beside its times, which are in that zone.
  const zone = f.timezone !== report.timezone ? html` <span class="badge" data-flow-zone title="its arrivals are steadiest in this zone">${f.timezone}</span>` : '';
  return html`<tr data-flow data-watched="${f.watched_by.length > 0}">
<td><strong>${f.user}</strong> <span class="muted">${f.event} · ${f.source}</span><br><code>${f.pattern}</code></td>
<td>${schedule(f)}</td>
<td>${f.arrival.p50}${zone} <span class="muted">(p95 ${f.arrival.p95}, max ${f.arrival.max}${f.arrival.outliers > 0 ? `; ${f.arrival.outliers} late outlier${f.arrival.outliers === 1 ? '' : 's'} left out, latest ${f.arrival.latest}` : ''})</span></td>
<td>${f.schedule.times.join(', ')}${zone}</td>
<td>${f.occurrences} <span class="muted">· ${f.missed} missed · ${f.late} late</span></td>
<td>${
    f.watched_by.length > 0
      ? html`<span class="badge arrived">watched</span> ${f.watched_by.join(', ')}`
      : html`<span class="badge missing">not watched</span><details><summary>proposed rule</summary><pre>${proposalYaml(one, { unwatchedOnly: false, by: 'transfer-watch /flows' })}</pre></details>`
  }</td></tr>`;
}

/** Flows that stopped arriving, first (contract 13a): what an operator most needs to hear; then those that started. */
function stoppedSection(r: DiscoverReport): SafeHtml {
  const stopped = r.changes.filter((c) => c.change === 'stopped');
  const started = r.changes.filter((c) => c.change === 'started');
  if (stopped.length === 0 && started.length === 0) return html``;
  const list = (changes: typeof r.changes) => html`<ul>${changes.map((c) => html`<li class="flow-change ${c.change}" data-flow-change="${c.change}"><code>${c.flow}</code> <span class="muted">since ${c.since.replace('T', ' ').slice(0, 16)} UTC: ${c.detail}</span></li>`)}</ul>`;
  return html`<section id="changes" data-section="changes">${stopped.length > 0 ? html`<h2>Stopped arriving</h2>${list(stopped)}` : ''}${started.length > 0 ? html`<h2>Started</h2>${list(started)}` : ''}</section>`;
}

/** `/flows`: the recurring flows found in the history, the ones nobody watches first, each with its proposed rule. */
export function renderFlowsPage(data: FlowsPageData, nonce: string): string {
  const r = data.report;
  const unwatched = r ? r.flows.filter((f) => f.watched_by.length === 0) : [];
  const watched = r ? r.flows.filter((f) => f.watched_by.length > 0) : [];
  const table = (flows: FlowReport[], report: DiscoverReport): SafeHtml =>
    html`<table class="flows"><thead><tr><th>Flow</th><th>Comes</th><th>Usually (${data.timezone})</th><th>Proposed deadline</th><th>Seen</th><th>Watched by</th></tr></thead><tbody>${flows.map((f) => flowRow(f, report))}</tbody></table>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>transfer-watch flows</title><style nonce="${nonce}">${PAGE_STYLE}
table.flows{width:100%;border-collapse:collapse;font-size:.9rem}table.flows td,table.flows th{border-bottom:1px solid var(--line);padding:.3rem;text-align:left;vertical-align:top}
table.flows code{overflow-wrap:anywhere}table.flows pre{white-space:pre-wrap;font-size:.8rem;background:var(--bg);padding:.4rem;border:1px solid var(--line)}</style></head>
<body><header><h1>transfer-watch flows</h1><p class="muted"><a href="/">← status page</a> · the files that arrive on a schedule, learned from the transfer history</p></header>
<main>
${data.problem ? html`<p class="notice error" role="status">${data.problem}</p>` : ''}
${
  r
    ? html`<p id="summary" class="${unwatched.length > 0 ? 'bad' : 'good'}">${r.flows.length} recurring flows between ${r.since.slice(0, 10)} and ${r.until.slice(0, 10)}: <strong>${unwatched.length} not watched</strong>, ${watched.length} watched by a rule; ${r.not_recurring.flows} other flows (${r.not_recurring.transfers} transfers) come at random or too often to expect. <a href="/api/v1/flows/proposal">All proposed rules (YAML)</a> · <a href="/api/v1/flows">JSON</a></p>
${stoppedSection(r)}
<section id="unwatched" data-section="unwatched"><h2>Not watched</h2>${unwatched.length > 0 ? table(unwatched, r) : html`<p class="muted">Every recurring flow is watched.</p>`}</section>
<section id="watched" data-section="watched"><h2>Watched</h2>${watched.length > 0 ? table(watched, r) : html`<p class="muted">No configured rule watches a recurring flow yet.</p>`}</section>`
    : ''
}
</main>
<footer class="muted">transfer-watch ${data.version} · times in ${data.timezone} · how flows are found: docs/flows.md</footer>
</body></html>
`.value;
}
