import { formatTime } from '../../util/format-time.js';
import { latenessText } from '../../sla/lateness-text.js';
import { html, type SafeHtml } from './safe-html.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';
import type { ExpectedFile, SendOutcome, Silence, StatusPageAlert, StatusPageData, StatusPageSource } from './status-page-data.js';
import { formatDuration } from '../../base/duration.js';

export interface RenderOptions {
  /** The CSRF token every form posts back (see csrf-guard.ts). */
  csrfToken: string;
  /** Per-response nonce allowed by the Content-Security-Policy for the one inline style and script. */
  nonce: string;
  /** A fixed message key from the redirect after an action (never free text from the URL). */
  notice?: string | undefined;
  /** The authenticated user: silences are created in this name, the form does not ask for one. */
  user?: string;
}

/** Where the page's forms post; the HTTP server routes these. */
export const SILENCE_ACTION = '/-/ui/silences';
/** The page's acknowledge form (contract 14). */
export const ACK_ACTION = '/-/ui/acks';
export const EXPIRE_ACTION = '/-/ui/silences/expire';

/** Alerts listed per alertname; beyond it the page says how many more (the JSON API lists all). Keeps the page small. */
export const MAX_ALERTS_PER_GROUP = 50;

/** Silence durations offered on the page; `duration` values are parsed with the config's duration syntax. */
export const SILENCE_DURATIONS = ['30m', '1h', '2h', '4h', '8h', '1d', '3d'] as const;

const NOTICES: Record<string, string> = {
  silenced: 'Silence created.',
  expired: 'Silence expired.',
  acknowledged: 'Acknowledged: no repeats and no escalation for these alerts while they fire; their resolution is still told.',
};

/** What each status means, shown next to it (the page must explain itself to someone paged at night). */
const STATUS_HELP: Record<ExpectedFile['status'], string> = {
  arrived: 'arrived in its window, by the deadline',
  late: 'arrived after the deadline',
  missing: 'not arrived by the deadline',
  in_jeopardy: 'the deadline is near and the file has not arrived: the rule\'s "in jeopardy" warning fires',
  not_due: 'the deadline is still ahead',
  awaiting_data:
    "the deadline has passed, but the source's history is not read up to it yet (polling is behind, or the source is down): nothing is claimed until it is",
};

const STATUS_TEXT: Record<ExpectedFile['status'], string> = {
  arrived: 'arrived',
  late: 'late',
  missing: 'missing',
  in_jeopardy: 'in jeopardy',
  not_due: 'not due yet',
  awaiting_data: 'awaiting data',
};

/** "12m ago" / "in 3h 5m": a rough sense of time next to the exact timestamp. */
export function formatRelative(ms: number, now: number): string {
  const diff = now - ms;
  const abs = Math.abs(diff);
  const s = Math.round(abs / 1000);
  let text: string;
  if (s < 60) text = `${s}s`;
  else if (s < 3600) text = `${Math.floor(s / 60)}m`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  else text = `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}

function time(ms: number, timezone: string, now: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${formatTime(ms, timezone)}</time> <span class="muted">(${formatRelative(ms, now)})</span>`;
}

function labelChips(labels: Record<string, string>, skip: readonly string[]): SafeHtml {
  const chips = Object.entries(labels)
    .filter(([name]) => !skip.includes(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => html`<span class="label"><span class="label-name">${name}</span>=<span class="label-value">${value}</span></span>`);
  return html`<div class="labels">${chips}</div>`;
}

/** Alerts grouped by alertname: firing groups first, then by name. */
export function groupAlerts(alerts: readonly StatusPageAlert[]): Array<{ alertname: string; alerts: StatusPageAlert[] }> {
  const groups = new Map<string, StatusPageAlert[]>();
  for (const a of alerts) {
    const name = a.labels['alertname'] ?? '(no alertname)';
    const list = groups.get(name) ?? [];
    list.push(a);
    groups.set(name, list);
  }
  const rank = (list: StatusPageAlert[]) => (list.some((a) => a.state === 'firing') ? 0 : 1);
  return [...groups.entries()]
    .map(([alertname, list]) => ({
      alertname,
      alerts: [...list].sort((a, b) => (a.state === b.state ? a.activeAt - b.activeAt : a.state === 'firing' ? -1 : 1)),
    }))
    .sort((a, b) => rank(a.alerts) - rank(b.alerts) || a.alertname.localeCompare(b.alertname));
}

/**
 * Acknowledge the group's firing alerts nobody acknowledged yet (contract 14), with a note: named by fingerprint, so
 * an alert that joins the group later is news.
 */
function ackForm(alertname: string, alerts: readonly StatusPageAlert[], csrfToken: string, user: string | undefined): SafeHtml | '' {
  const open = alerts.filter((a) => a.state === 'firing' && a.ack === undefined);
  if (open.length === 0) return '';
  return html`<details class="action ack"><summary>Acknowledge…</summary>
<form method="post" action="${ACK_ACTION}" class="ack-form">
<input type="hidden" name="csrf" value="${csrfToken}">
${open.map((a) => html`<input type="hidden" name="fingerprint" value="${a.fingerprint}">`)}
${user === undefined ? html`<label>Your name <input type="text" name="author" required maxlength="100" autocomplete="name"></label>` : html`<span class="muted">as ${user}</span>`}
<label>Note <input type="text" name="comment" maxlength="500" placeholder="on it, calling the bank…"></label>
<button type="submit">Acknowledge ${open.length === 1 ? 'this alert' : `these ${open.length} alerts`} of ${alertname}</button>
</form></details>`;
}

function silenceForm(alert: StatusPageAlert, csrfToken: string, user: string | undefined): SafeHtml {
  const options = SILENCE_DURATIONS.map((d) => html`<option value="${d}"${d === '2h' ? html` selected` : ''}>${d}</option>`);
  return html`<details class="action"><summary>Silence…</summary>
<form method="post" action="${SILENCE_ACTION}" class="silence-form">
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="fingerprint" value="${alert.fingerprint}">
<label>For <select name="duration">${options}</select></label>
${user === undefined ? html`<label>Your name <input type="text" name="author" required maxlength="100" autocomplete="name"></label>` : html`<span class="muted">as ${user}</span>`}
<label>Comment <input type="text" name="comment" required maxlength="500" placeholder="why, ticket…"></label>
<button type="submit">Silence this alert</button>
</form></details>`;
}

/** A runbook link only for http(s) URLs and paths on this server: an annotation is never made a script link. */
function runbookLink(alert: StatusPageAlert): SafeHtml | '' {
  const url = alert.annotations['runbook_url'];
  if (url === undefined) return '';
  const safe = /^https?:\/\//i.test(url) || (url.startsWith('/') && !url.startsWith('//'));
  return safe ? html` <a class="runbook" href="${url}" rel="noopener noreferrer">runbook</a>` : '';
}

/** Silenced or inhibited: it fires, but nobody is told; shown apart and not counted as firing. */
function hidden(alert: StatusPageAlert): boolean {
  return alert.silencedBy.length > 0 || alert.inhibitedBy.length > 0;
}

function renderAlert(alert: StatusPageAlert, data: StatusPageData, csrfToken: string, user?: string): SafeHtml {
  const silences = alert.silencedBy.map((id) => data.silences.find((s) => s.id === id)).filter((s): s is Silence => s !== undefined);
  const silenced = alert.silencedBy.length > 0;
  const severity = alert.labels['severity'];
  const summary = alert.annotations['summary'];
  return html`<li class="alert ${alert.state}${silenced ? ' silenced' : ''}" data-fingerprint="${alert.fingerprint}">
<div class="alert-head"><span class="badge ${alert.state}">${alert.state}</span>${severity ? html` <span class="badge sev">${severity}</span>` : ''}${
    silenced ? html` <span class="badge silenced">silenced</span>` : ''
  }${alert.inhibitedBy.length > 0 ? html` <span class="badge inhibited">inhibited</span>` : ''} <span class="since">since ${time(alert.activeAt, data.timezone, data.now)}</span></div>
${summary || alert.annotations['runbook_url'] ? html`<p class="summary">${summary ?? ''}${runbookLink(alert)}</p>` : ''}
${labelChips(alert.labels, ['alertname', 'severity'])}
${alert.held ? html`<p class="held">Below its threshold since ${time(alert.held.clearedAt, data.timezone, data.now)}; kept firing until ${time(alert.held.until, data.timezone, data.now)} by keep_firing_for (${formatDuration(alert.held.keepFiringFor)}), so a short lull does not resolve and page again.</p>` : ''}
${alert.inhibitedBy.length > 0 ? html`<p class="silenced-by">Inhibited by ${alert.inhibitedBy.length} firing alert${alert.inhibitedBy.length === 1 ? '' : 's'} (inhibit_rules): not notified while ${alert.inhibitedBy.length === 1 ? 'it fires' : 'they fire'}.</p>` : ''}
${alert.ack ? html`<p class="acked">Acknowledged by ${alert.ack.by} at ${time(alert.ack.at, data.timezone, data.now)}${alert.ack.comment ? `: ${alert.ack.comment}` : ''}</p>` : ''}
${silences.map((s) => html`<p class="silenced-by">Silenced by ${s.createdBy} until ${time(Date.parse(s.endsAt), data.timezone, data.now)}: ${s.comment}</p>`)}
${silenced ? '' : silenceForm(alert, csrfToken, user)}
<p class="muted"><a href="/history?fingerprint=${encodeURIComponent(alert.fingerprint)}">History of this alert</a> (its transitions and every notification attempt)</p>
</li>`;
}

function alertGroupsHtml(alerts: readonly StatusPageAlert[], data: StatusPageData, csrfToken: string, user?: string): SafeHtml[] {
  return groupAlerts(alerts).map((g) => {
          const firing = g.alerts.filter((a) => a.state === 'firing').length;
          const pending = g.alerts.length - firing;
          const acked = g.alerts.filter((a) => a.ack !== undefined).length;
          return html`<div class="group"><h3>${g.alertname} <span class="muted">${firing} firing${pending > 0 ? `, ${pending} pending` : ''}${acked > 0 ? `, ${acked} acknowledged` : ''}</span></h3>
${ackForm(g.alertname, g.alerts, csrfToken, user)}
<ul class="alerts">${g.alerts.slice(0, MAX_ALERTS_PER_GROUP).map((a) => renderAlert(a, data, csrfToken, user))}</ul>${
            g.alerts.length > MAX_ALERTS_PER_GROUP
              ? html`<p class="muted">${g.alerts.length - MAX_ALERTS_PER_GROUP} more not shown; see <a href="/api/v1/alerts">/api/v1/alerts</a>.</p>`
              : ''
          }</div>`;
  });
}

function alertsSection(data: StatusPageData, csrfToken: string, user?: string): SafeHtml {
  const shown = data.alerts.filter((a) => !hidden(a));
  const muted = data.alerts.filter(hidden);
  const body = shown.length === 0 ? html`<p class="ok">No firing or pending alerts.</p>` : alertGroupsHtml(shown, data, csrfToken, user);
  const mutedPart =
    muted.length === 0
      ? ''
      : html`<div id="muted-alerts" data-section="muted-alerts"><h3>Silenced or inhibited <span class="muted">${muted.length} (firing, but nobody is notified)</span></h3>${alertGroupsHtml(muted, data, csrfToken, user)}</div>`;
  return html`<section id="alerts" data-section="alerts"><h2>Alerts</h2>${body}${mutedPart}</section>`;
}

/** Silences listed on the page; the rest are counted and left to the API (a flood must not make a 100 MB page). */
export const MAX_SILENCES_SHOWN = 50;

function silencesSection(data: StatusPageData, csrfToken: string): SafeHtml {
  const live = data.silences.filter((s) => s.status.state !== 'expired');
  const rows = live.slice(0, MAX_SILENCES_SHOWN).map(
    (s) => html`<li class="silence" data-silence-id="${s.id}"><span class="badge">${s.status.state}</span> ${labelChips(
      Object.fromEntries(s.matchers.map((m) => [m.name, `${m.isEqual ? '' : '!'}${m.isRegex ? '~' : ''}${m.value}`])),
      [],
    )}
<p>${s.comment} <span class="muted">— ${s.createdBy}, until ${time(Date.parse(s.endsAt), data.timezone, data.now)}</span></p>
<form method="post" action="${EXPIRE_ACTION}"><input type="hidden" name="csrf" value="${csrfToken}"><input type="hidden" name="id" value="${s.id}"><button type="submit" class="secondary">Expire</button></form></li>`,
  );
  const more = live.length - rows.length;
  return html`<section id="silences" data-section="silences"><h2>Silences</h2>${
    rows.length === 0 ? html`<p class="muted">No active silences.</p>` : html`<ul class="silences">${rows}</ul>`
  }${more > 0 ? html`<p class="muted">${more} more not shown; see <a href="/api/v2/silences">/api/v2/silences</a> or <code>transfer-watch silence list</code>.</p>` : ''}</section>`;
}

function expectationsSection(data: StatusPageData): SafeHtml {
  const rows = data.expectations.map(
    (e) => html`<tr class="expect ${e.status}"><td data-label="Rule" class="rule">${e.rule}${e.key ? html`<br><span class="muted">${e.key.label}=${e.key.value}</span>` : ''}</td>
<td data-label="File">${e.files.length > 0 ? e.files.join(', ') : html`<span class="muted">any file</span>`}</td>
<td data-label="Deadline">${time(e.deadline, e.timezone, data.now)}</td>
<td data-label="Status"><span class="badge ${e.status}" title="${STATUS_HELP[e.status]}">${STATUS_TEXT[e.status]}</span>${
      e.status === 'awaiting_data' ? html`<br><span class="muted help">${STATUS_HELP.awaiting_data}</span>` : ''
    }${e.arrivedAt !== undefined ? html`<br>at ${time(e.arrivedAt, e.timezone, data.now)}${e.status === 'late' ? `, ${latenessText((e.arrivedAt - e.deadline) / 1000)}` : ''}` : ''}${
      e.learnedWarning && e.status !== 'arrived' && e.status !== 'late'
        ? html`<br><span class="muted help">${'why' in e.learnedWarning ? e.learnedWarning.why : html`warns at ${time(e.learnedWarning.at, e.timezone, data.now)}, its usual arrival (${e.learnedWarning.judged} judged)`}</span>`
        : ''
    }${
      e.minCount > 1 ? html`<br><span class="muted">${e.count} of ${e.minCount}</span>` : ''
    }</td></tr>`,
  );
  return html`<section id="expected" data-section="expected"><h2>Expected files today <span class="muted"><a href="/sla">SLA by month</a></span></h2>${
    rows.length === 0
      ? html`<p class="muted">No missing_file rules.</p>`
      : html`<div class="scroll"><table class="stack"><thead><tr><th>Rule</th><th>File</th><th>Deadline</th><th>Status</th></tr></thead><tbody>${rows}</tbody></table></div>`
  }</section>`;
}

function sourceCard(source: StatusPageSource, data: StatusPageData): SafeHtml {
  const streams = source.streams.map((st) => {
    const last = st.lastSuccessfulPoll === null ? undefined : Date.parse(st.lastSuccessfulPoll);
    return html`<tr><td data-label="Stream">${st.stream}${st.instance ? html` <span class="muted">${st.instance}</span>` : ''}</td>
<td data-label="Last successful poll">${last === undefined ? html`<span class="muted">never</span>` : time(last, data.timezone, data.now)}</td>
<td data-label="Data lag">${st.dataLagSeconds === null ? '–' : `${Math.round(st.dataLagSeconds)} s`}</td>
<td data-label="Last error">${st.lastError ? html`<span class="error">${st.lastError.reason}</span>: ${st.lastError.message} <span class="muted">(${time(Date.parse(st.lastError.at), data.timezone, data.now)})</span>` : html`<span class="muted">none</span>`}</td></tr>`;
  });
  return html`<div class="source"><h3>${source.name} <span class="badge ${source.up ? 'up' : 'down'}">${source.up ? 'up' : 'down'}</span></h3>
<div class="scroll"><table class="stack"><thead><tr><th>Stream</th><th>Last successful poll</th><th>Data lag</th><th>Last error</th></tr></thead><tbody>${streams}</tbody></table></div></div>`;
}

function clusterPart(data: StatusPageData): SafeHtml | '' {
  const c = data.cluster;
  if (!c) return '';
  const rows = Object.entries(c.sources).map(
    ([source, holder]) => html`<tr><td data-label="Source">${source}</td><td data-label="Polled by">${holder ?? html`<span class="error">nobody (lease free)</span>`}${holder === c.replica ? html` <span class="muted">(this replica)</span>` : ''}</td></tr>`,
  );
  return html`<div id="cluster" data-section="cluster"><h3>Replicas <span class="muted">${c.replicas.length} live · this is ${c.replica} · leader: ${c.leader ?? 'none'}${
    c.redisUp ? '' : html` · <span class="error">Redis unreachable</span>`
  }</span></h3><div class="scroll"><table class="stack"><thead><tr><th>Source</th><th>Polled by</th></tr></thead><tbody>${rows}</tbody></table></div></div>`;
}

function sourcesSection(data: StatusPageData): SafeHtml {
  return html`<section id="sources" data-section="sources"><h2>Sources</h2>${clusterPart(data)}${data.sources.map((s) => sourceCard(s, data))}</section>`;
}

function notificationsSection(data: StatusPageData): SafeHtml {
  const byReceiver = new Map<string, SendOutcome[]>();
  for (const s of data.sends) {
    const key = `${s.receiver} (${s.integration})`;
    byReceiver.set(key, [...(byReceiver.get(key) ?? []), s]);
  }
  const receivers = [...byReceiver.entries()].sort(([a], [b]) => a.localeCompare(b));
  const body =
    receivers.length === 0
      ? html`<p class="muted">No notifications sent since the daemon started.</p>`
      : receivers.map(([name, sends]) => {
          // Counted in the history's words: an attempt that will be retried is "retrying", not "failed".
          const counts = new Map<string, number>([['sent', 0]]);
          for (const s of sends) counts.set(s.outcome, (counts.get(s.outcome) ?? 0) + 1);
          const tally = [...counts].filter(([outcome, n]) => n > 0 || outcome === 'sent').map(([outcome, n]) => `${n} ${outcome.replace('_', ' ')}`);
          const items = sends.slice(0, 10).map(
            (s) => html`<li class="send ${s.outcome}"><span class="badge ${s.outcome}">${s.outcome.replace('_', ' ')}</span> ${s.status} ${s.alerts.join('; ')} <span class="muted">${time(s.at, data.timezone, data.now)}${
              s.attempts > 1 ? `, attempt ${s.attempts}` : ''
            }</span>${s.error ? html`<br><span class="error">${s.error}</span>` : ''}</li>`,
          );
          return html`<div class="receiver"><h3>${name} <span class="muted">${tally.join(', ')} (recent)</span></h3><ul class="sends">${items}</ul></div>`;
        });
  return html`<section id="notifications" data-section="notifications"><h2>Recent notifications</h2>${body}</section>`;
}

/** The history's state, when it needs saying: disabled (why), or its database not answering. */
function historyNote(data: StatusPageData): SafeHtml | '' {
  const h = data.history;
  if (!h) return '';
  if (h.history === 'disabled') return html`<p id="history-state" class="notice" data-section="history-state">No history of alerts and notifications is kept: ${h.why ?? 'disabled'}.</p>`;
  if (h.up === false) {
    return html`<p id="history-state" class="notice error" data-section="history-state">The history database (${h.history}) does not answer: alerting goes on${
      h.waiting !== undefined ? html`; ${h.waiting} records wait in the state store` : ''
    } and are written when it is back.</p>`;
  }
  return '';
}

function headerSummary(data: StatusPageData): SafeHtml {
  const shown = data.alerts.filter((a) => !hidden(a));
  const firing = shown.filter((a) => a.state === 'firing').length;
  const pending = shown.length - firing;
  const muted = data.alerts.length - shown.length;
  const down = data.sources.filter((s) => !s.up).length;
  return html`<p id="summary" data-section="summary" class="${firing > 0 || down > 0 ? 'bad' : 'good'}"><strong>${firing}</strong> firing, <strong>${pending}</strong> pending${
    muted > 0 ? html`, <strong>${muted}</strong> silenced or inhibited` : ''
  }, <strong>${data.sources.length - down}/${data.sources.length}</strong> sources up · as of ${formatTime(data.now, data.timezone)}</p>`;
}

/** The whole status page: server-rendered, readable without JavaScript; the inline script only refreshes it. */
export function renderStatusPage(data: StatusPageData, opts: RenderOptions): string {
  const notice = opts.notice !== undefined ? NOTICES[opts.notice] : undefined;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>transfer-watch status</title><style nonce="${opts.nonce}">${PAGE_STYLE}</style></head>
<body><header><h1>transfer-watch</h1>${headerSummary(data)}<p class="muted" id="refresh-state" aria-live="polite">Refreshes every 15 s.</p></header>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${historyNote(data)}
<main>
${alertsSection(data, opts.csrfToken, opts.user)}
${expectationsSection(data)}
${sourcesSection(data)}
${notificationsSection(data)}
${silencesSection(data, opts.csrfToken)}
</main>
<footer class="muted">transfer-watch ${data.version} · times in ${data.timezone} unless marked · <a href="/history">history</a> · <a href="/sla">SLA of expected files</a> · <a href="/flows">flows</a> · <a href="/api/v1/alerts">alerts</a> · <a href="/api/v1/status">status</a> · <a href="/api/v1/silences">silences</a> · <a href="/metrics">metrics</a></footer>
<script nonce="${opts.nonce}">${PAGE_SCRIPT}</script>
</body></html>
`.value;
}
