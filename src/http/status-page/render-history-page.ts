import { spanText, type OncallRow } from '../../history/oncall-report.js';
import { formatTime } from '../../util/format-time.js';
import type { AlertEventRecord, AttemptRecord, SilenceEventRecord } from '../../history/history-records.js';
import { html, type SafeHtml } from './safe-html.js';
import { PAGE_STYLE } from './page-style.js';

/** One alert's story: its transitions and every attempt to notify about it, oldest first. */
export interface AlertTimeline {
  fingerprint: string;
  events: AlertEventRecord[];
  attempts: AttemptRecord[];
}

export interface HistoryPageData {
  now: number;
  timezone: string;
  version: string;
  /** What was searched (echoed into the form as text, never as markup). */
  search: { filter: string; since: string };
  /** Search results, newest first, and the cursor of the next page. */
  results?: { events: AlertEventRecord[]; next: string | null };
  timeline?: AlertTimeline;
  /**
   * Silence events, newest first: who silenced and why, for the alert events that name a silence, and the
   * silences' own story (created, updated, expired) in the searched range.
   */
  silences?: SilenceEventRecord[];
  /** The silence events of the searched range (with a search, not a timeline). */
  silencesInRange?: SilenceEventRecord[];
  /** How fast alerts of the searched span were acknowledged and resolved, by alert name (contract 14). */
  oncall?: OncallRow[];
  /** Why there is nothing to show (history disabled, database down, a bad filter). */
  problem?: string;
}

const SINCE_CHOICES = ['1h', '24h', '7d', '30d', '90d', '400d'] as const;
export const HISTORY_SINCE_CHOICES: readonly string[] = SINCE_CHOICES;

function when(ms: number, timezone: string): SafeHtml {
  return html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms, timezone)}</time>`;
}

function labelChips(labels: Record<string, string>): SafeHtml {
  const chips = Object.entries(labels)
    .filter(([name]) => name !== 'alertname')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => html`<span class="label"><span class="label-name">${name}</span>=<span class="label-value">${value}</span></span>`);
  return html`<div class="labels">${chips}</div>`;
}

/** Who made each silence and why: its newest event that carries them (created or updated). */
function silenceAuthors(events: readonly SilenceEventRecord[] | undefined): Map<string, SilenceEventRecord> {
  const out = new Map<string, SilenceEventRecord>();
  for (const e of events ?? []) if (!out.has(e.silence_id)) out.set(e.silence_id, e);
  return out;
}

function silenceText(id: string, silences: ReadonlyMap<string, SilenceEventRecord>): SafeHtml {
  const s = silences.get(id);
  return s ? html`${id} — by ${s.created_by}: “${s.comment}”` : html`${id}`;
}

function eventText(e: AlertEventRecord, silences: ReadonlyMap<string, SilenceEventRecord>): SafeHtml {
  if (e.event === 'silenced' || e.event === 'unsilenced') return html`${e.event} <span class="muted">by silence ${silenceText(e.silence_id ?? '', silences)}</span>`;
  if (e.event === 'inhibited' || e.event === 'uninhibited') return html`${e.event} <span class="muted">by alert ${e.inhibited_by ?? ''}</span>`;
  const d = e.detail ?? {};
  if (e.event === 'acknowledged' || e.event === 'unacknowledged') return html`${e.event} <span class="muted">by ${String(d['by'] ?? '')}${d['comment'] ? `: “${String(d['comment'])}”` : ''}</span>`;
  if (e.event === 'escalated') return html`${e.event} <span class="muted">step ${String(d['step'] ?? '')} of ${String(d['of'] ?? '')} to ${String(d['receiver'] ?? '')}</span>`;
  return html`${e.event}`;
}

function matchersText(e: SilenceEventRecord): string {
  return e.matchers.map((m) => `${m.name}${m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!='}${JSON.stringify(m.value)}`).join(', ');
}

function silencesSection(events: readonly SilenceEventRecord[], data: HistoryPageData): SafeHtml {
  const rows = events.map(
    (e) => html`<tr><td data-label="When">${when(e.at, data.timezone)}</td><td data-label="Event">${e.event}</td><td data-label="Silence">${e.silence_id}<br><span class="muted">${matchersText(e)}</span></td>
<td data-label="Who and why">${e.created_by}: “${e.comment}”</td><td data-label="Active">${when(e.starts_at, data.timezone)} to ${when(e.ends_at, data.timezone)}</td></tr>`,
  );
  return html`<section id="silences" data-section="silences"><h2>Silence events <span class="muted">newest first</span></h2>${
    rows.length === 0
      ? html`<p class="muted">No silence was created, changed or expired in this time.</p>`
      : html`<div class="scroll"><table class="stack"><thead><tr><th>When (${data.timezone})</th><th>Event</th><th>Silence</th><th>Who and why</th><th>Active</th></tr></thead><tbody>${rows}</tbody></table></div>`
  }</section>`;
}

function attemptText(a: AttemptRecord): SafeHtml {
  const attempt = a.outcome === 'gave_up' ? '' : ` (attempt ${a.attempt}, ${Math.round(a.duration_ms)} ms)`;
  return html`notification <span class="badge ${a.outcome}">${a.outcome.replace('_', ' ')}</span> ${a.status} to ${a.receiver} <span class="muted">(${a.integration})</span>${attempt}<br><span class="muted">${a.title}</span>${
    a.error ? html`<br><span class="error">${a.error}</span>` : ''
  }`;
}

function timelineSection(t: AlertTimeline, data: HistoryPageData): SafeHtml {
  const first = t.events[t.events.length - 1] ?? t.events[0];
  const silences = silenceAuthors(data.silences);
  const rows = [...t.events.map((e) => ({ at: e.at, text: eventText(e, silences), kind: 'event' })), ...t.attempts.map((a) => ({ at: a.at, text: attemptText(a), kind: 'attempt' }))].sort((a, b) => a.at - b.at);
  return html`<section id="timeline" data-section="timeline"><h2>Timeline of ${first?.labels['alertname'] ?? t.fingerprint} <span class="muted">${t.fingerprint}</span></h2>
${first ? labelChips(first.labels) : ''}${first?.annotations['summary'] ? html`<p class="summary">${first.annotations['summary']}</p>` : ''}
${
  rows.length === 0
    ? html`<p class="muted">Nothing recorded for this alert in the history's retention.</p>`
    : html`<div class="scroll"><table class="stack"><thead><tr><th>When (${data.timezone})</th><th>What</th></tr></thead><tbody>${rows.map(
        (r) => html`<tr class="${r.kind}"><td data-label="When">${when(r.at, data.timezone)}</td><td data-label="What">${r.text}</td></tr>`,
      )}</tbody></table></div>`
}</section>`;
}

function resultsSection(results: NonNullable<HistoryPageData['results']>, data: HistoryPageData): SafeHtml {
  const silences = silenceAuthors(data.silences);
  const rows = results.events.map(
    (e) => html`<tr><td data-label="When">${when(e.at, data.timezone)}</td><td data-label="Event">${eventText(e, silences)}</td>
<td data-label="Alert"><a href="/history?fingerprint=${encodeURIComponent(e.fingerprint)}">${e.labels['alertname'] ?? e.fingerprint}</a>${labelChips(e.labels)}</td></tr>`,
  );
  const next = results.next
    ? html`<p><a href="/history?${new URLSearchParams({ filter: data.search.filter, since: data.search.since, cursor: results.next }).toString()}">Older events →</a></p>`
    : '';
  return html`<section id="results" data-section="results"><h2>Alert events <span class="muted">newest first</span></h2>${
    rows.length === 0
      ? html`<p class="muted">No alert events match.</p>`
      : html`<div class="scroll"><table class="stack"><thead><tr><th>When (${data.timezone})</th><th>Event</th><th>Alert (open its timeline)</th></tr></thead><tbody>${rows}</tbody></table></div>`
  }${next}</section>`;
}

/** `/history`: search past alerts by labels and time, or one alert's timeline. Server-rendered, no script. */
/** MTTA and MTTR by alert name over the searched span: how fast people answered (contract 14). */
function oncallSection(rows: readonly OncallRow[], data: HistoryPageData): SafeHtml {
  const body = rows.length
    ? html`<table><thead><tr><th>Alert</th><th>Firings</th><th>Acknowledged</th><th>Escalated</th><th>Time to acknowledge p50 / p95</th><th>Time to resolve p50 / p95</th></tr></thead><tbody>${rows.map(
        (r) => html`<tr><td>${r.group || '(none)'}</td><td>${String(r.alerts)}</td><td>${String(r.acknowledged)}</td><td>${String(r.escalated)}</td><td>${spanText(r.mtta_seconds.p50)} / ${spanText(r.mtta_seconds.p95)}</td><td>${spanText(r.mttr_seconds.p50)} / ${spanText(r.mttr_seconds.p95)}</td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted">No alert fired in the last ${data.search.since}.</p>`;
  return html`<section id="oncall" data-section="oncall"><h2>On-call response, last ${data.search.since}</h2>${body}<p class="muted"><a href="/api/v1/history/oncall">by receiver or partner (JSON: ?by=receiver, ?by=user)</a></p></section>`;
}

export function renderHistoryPage(data: HistoryPageData, nonce: string): string {
  const options = SINCE_CHOICES.map((s) => html`<option value="${s}"${s === data.search.since ? html` selected` : ''}>last ${s}</option>`);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>transfer-watch history</title><style nonce="${nonce}">${PAGE_STYLE}</style></head>
<body><header><h1>transfer-watch history</h1><p class="muted"><a href="/">← status page</a> · what fired, who was told and when</p></header>
<main>
<section id="search" data-section="search"><h2>Search past alerts</h2>
<form method="get" action="/history"><label>Labels <input type="text" name="filter" size="50" placeholder='alertname="TransferErrorBurst", user=~"BANK.*"' value="${data.search.filter}"></label>
<label>Time <select name="since">${options}</select></label> <button type="submit">Search</button></form></section>
${data.problem ? html`<p class="notice error" role="status">${data.problem}</p>` : ''}
${data.timeline ? timelineSection(data.timeline, data) : ''}
${data.results ? resultsSection(data.results, data) : ''}
${data.results && data.oncall ? oncallSection(data.oncall, data) : ''}
${data.results && data.silencesInRange ? silencesSection(data.silencesInRange, data) : ''}
</main>
<footer class="muted">transfer-watch ${data.version} · times in ${data.timezone} · <a href="/api/v1/history/alerts">alert history (JSON)</a> · <a href="/api/v1/history/notifications">notification history (JSON)</a></footer>
</body></html>
`.value;
}
