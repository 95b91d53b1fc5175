import { describe, expect, it } from 'vitest';
import { MAX_ALERTS_PER_GROUP, groupAlerts, renderStatusPage, formatRelative } from '../../src/http/status-page/render-status-page.js';
import { escapeHtml, html, SafeHtml } from '../../src/http/status-page/safe-html.js';
import type { StatusPageAlert, StatusPageData } from '../../src/http/status-page/status-page-data.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const HOSTILE_FILE = '<img src=x onerror=alert(1)>.RET';
const HOSTILE_SCRIPT = '<script>alert("pwned")</script>';

function alert(labels: Record<string, string>, over: Partial<StatusPageAlert> = {}): StatusPageAlert {
  return {
    labels,
    annotations: { summary: `${labels['alertname'] ?? ''} summary` },
    state: 'firing',
    activeAt: NOW - 12 * 60_000,
    fingerprint: `fp-${Object.values(labels).join('-')}`,
    silencedBy: [],
    inhibitedBy: [],
    ...over,
  };
}

function data(over: Partial<StatusPageData> = {}): StatusPageData {
  return {
    now: NOW,
    timezone: 'UTC',
    version: '1.2.3',
    alerts: [],
    expectations: [],
    sources: [],
    sends: [],
    silences: [],
    ...over,
  };
}

const OPTS = { csrfToken: 'TOKEN123', nonce: 'NONCE456' };

/** Text of every element body, decoded, for asserting what a person reads. */
function decode(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&amp;/g, '&');
}

describe('safe html', () => {
  it('escapes every interpolation unless it is SafeHtml, and joins arrays', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;');
    const out = html`<p title="${'"><script>'}">${['<b>', new SafeHtml('<i>ok</i>')]}${undefined}${false}${0}</p>`.value;
    expect(out).toBe('<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;<i>ok</i>0</p>');
  });
});

describe('renderStatusPage', () => {
  it('escapes service-supplied text everywhere it appears, leaving only our own script and style tags', () => {
    const page = renderStatusPage(
      data({
        alerts: [
          alert(
            { alertname: 'TransferErrorBurst', severity: 'critical', file: HOSTILE_FILE, user: HOSTILE_SCRIPT },
            { annotations: { summary: `failed: ${HOSTILE_FILE} ${HOSTILE_SCRIPT}` }, silencedBy: ['s1'], fingerprint: 'a1b2c3' },
          ),
        ],
        expectations: [
          { rule: 'R', files: [HOSTILE_FILE], key: { label: 'user', value: HOSTILE_SCRIPT }, deadline: NOW - 3_600_000, windowStart: NOW - 9 * 3_600_000, timezone: 'UTC', status: 'missing', count: 0, minCount: 1 },
        ],
        sources: [
          { name: 'prod', up: false, streams: [{ stream: 'failures', instance: undefined, lastSuccessfulPoll: null, dataLagSeconds: null, lastError: { reason: 'http_5xx', message: HOSTILE_SCRIPT, at: new Date(NOW).toISOString() } }] },
        ],
        sends: [{ at: NOW, receiver: 'hook', integration: 'webhook', outcome: 'failed', status: 'firing', alerts: [HOSTILE_FILE], attempts: 1, error: HOSTILE_SCRIPT }],
        silences: [
          {
            id: 's1',
            matchers: [{ name: 'file', value: HOSTILE_FILE, isRegex: false, isEqual: true }],
            startsAt: new Date(NOW).toISOString(),
            endsAt: new Date(NOW + 3_600_000).toISOString(),
            createdBy: HOSTILE_SCRIPT,
            comment: HOSTILE_FILE,
            updatedAt: new Date(NOW).toISOString(),
            status: { state: 'active' },
          },
        ],
      }),
      OPTS,
    );
    expect(page).not.toContain('<img');
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).toContain('<script nonce="NONCE456">');
    expect(page).toContain('<style nonce="NONCE456">');
    expect(page.replace(/<script nonce="NONCE456">[\s\S]*?<\/script>/, '')).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i); // no event handler attribute in any tag
    // And the text is all there, literally, for a person to read.
    const escapedFile = escapeHtml(HOSTILE_FILE);
    const escapedScript = escapeHtml(HOSTILE_SCRIPT);
    for (const fragment of [escapedFile, escapedScript]) expect(page.split(fragment).length - 1).toBeGreaterThanOrEqual(5);
    expect(decode(page)).toContain(`failed: ${HOSTILE_FILE} ${HOSTILE_SCRIPT}`);
  });

  it('groups alerts by alertname, firing groups first, with state, severity, labels, summary and since-when in the display zone', () => {
    const page = renderStatusPage(
      data({
        timezone: 'America/Sao_Paulo',
        alerts: [
          alert({ alertname: 'Zeta', severity: 'warning', user: 'BANK1' }, { state: 'pending' }),
          alert({ alertname: 'Alpha', severity: 'critical', user: 'BANK2' }, { state: 'pending' }),
          alert({ alertname: 'Zeta', severity: 'warning', user: 'BANK3' }),
        ],
      }),
      OPTS,
    );
    const order = [...page.matchAll(/<h3>([A-Za-z]+) <span class="muted">([^<]+)<\/span>/g)].map((m) => `${m[1]}: ${m[2]}`);
    expect(order).toEqual(['Zeta: 1 firing, 1 pending', 'Alpha: 0 firing, 1 pending']);
    expect(page).toContain('2026-11-23 08:48:00 -03:00 (America/Sao_Paulo)');
    expect(page).toContain('(12m ago)');
    expect(page).toContain('<span class="label-name">user</span>=<span class="label-value">BANK3</span>');
    expect(page).toContain('Zeta summary');
    expect(page).toContain('<strong>1</strong> firing, <strong>2</strong> pending');
    expect(groupAlerts([alert({ alertname: 'B' }), alert({ alertname: 'A' })]).map((g) => g.alertname)).toEqual(['A', 'B']);
  });

  it('offers a CSRF-tokened silence form only for alerts not silenced, and says who silenced the others', () => {
    const silenced = alert({ alertname: 'Quiet' }, { silencedBy: ['s9'] });
    const loud = alert({ alertname: 'Loud' });
    const page = renderStatusPage(
      data({
        alerts: [silenced, loud],
        silences: [
          {
            id: 's9',
            matchers: [{ name: 'alertname', value: 'Quiet', isRegex: false, isEqual: true }],
            startsAt: new Date(NOW).toISOString(),
            endsAt: new Date(NOW + 7_200_000).toISOString(),
            createdBy: 'ana',
            comment: 'maintenance',
            updatedAt: new Date(NOW).toISOString(),
            status: { state: 'active' },
          },
        ],
      }),
      OPTS,
    );
    const quiet = page.slice(page.indexOf(`data-fingerprint="${silenced.fingerprint}"`), page.indexOf('</li>', page.indexOf(`data-fingerprint="${silenced.fingerprint}"`)));
    const loudItem = page.slice(page.indexOf(`data-fingerprint="${loud.fingerprint}"`), page.indexOf('</li>', page.indexOf(`data-fingerprint="${loud.fingerprint}"`)));
    expect(quiet).toContain('<span class="badge silenced">silenced</span>');
    expect(quiet).toContain('Silenced by ana until <time datetime="2026-11-23T14:00:00.000Z">2026-11-23 14:00:00 UTC</time> <span class="muted">(in 2h 0m)</span>: maintenance');
    expect(quiet).not.toContain('<form');
    expect(loudItem).toContain('<form method="post" action="/-/ui/silences"');
    expect(loudItem).toContain('<input type="hidden" name="csrf" value="TOKEN123">');
    expect(loudItem).toContain(`<input type="hidden" name="fingerprint" value="${loud.fingerprint}">`);
    // The silence is listed with an expire form.
    expect(page).toContain('action="/-/ui/silences/expire"');
    expect(page).toContain('<input type="hidden" name="id" value="s9">');
  });

  it('shows each expected file state with its deadline in the rule zone, and source health and recent sends', () => {
    const base = { rule: 'StatementMissing', files: ['EXTRATO_*.RET'], windowStart: NOW - 8 * 3_600_000, timezone: 'America/Sao_Paulo', count: 0, minCount: 1 };
    const page = renderStatusPage(
      data({
        expectations: [
          { ...base, key: { label: 'user', value: 'BANK1' }, deadline: NOW - 3_600_000, status: 'arrived', arrivedAt: NOW - 2 * 3_600_000, count: 1 },
          { ...base, key: { label: 'user', value: 'BANK2' }, deadline: NOW - 3_600_000, status: 'late', arrivedAt: NOW - 600_000 },
          { ...base, key: { label: 'user', value: 'BANK3' }, deadline: NOW - 3_600_000, status: 'missing' },
          { ...base, key: { label: 'user', value: 'BANK4' }, deadline: NOW + 3_600_000, status: 'not_due' },
          { ...base, key: { label: 'user', value: 'BANK5' }, deadline: NOW - 3_600_000, status: 'awaiting_data' },
          { ...base, key: { label: 'user', value: 'BANK6' }, deadline: NOW + 600_000, status: 'in_jeopardy' },
        ],
        sources: [
          { name: 'prod', up: true, streams: [{ stream: 'failures', instance: undefined, lastSuccessfulPoll: new Date(NOW - 5_000).toISOString(), dataLagSeconds: 31.6, lastError: null }] },
          { name: 'dr', up: false, streams: [{ stream: 'failures', instance: 'DR1', lastSuccessfulPoll: null, dataLagSeconds: null, lastError: { reason: 'unauthorized', message: 'HTTP 401', at: new Date(NOW).toISOString() } }] },
        ],
        sends: [
          { at: NOW - 1_000, receiver: 'oncall', integration: 'slack', outcome: 'sent', status: 'firing', alerts: ['Burst'], attempts: 2 },
          { at: NOW - 2_000, receiver: 'oncall', integration: 'slack', outcome: 'failed', status: 'firing', alerts: ['Burst'], attempts: 1, error: 'HTTP 503' },
          { at: NOW - 3_000, receiver: 'oncall', integration: 'slack', outcome: 'retrying', status: 'firing', alerts: ['Burst'], attempts: 1, error: 'HTTP 503' },
          { at: NOW - 4_000, receiver: 'oncall', integration: 'slack', outcome: 'gave_up', status: 'firing', alerts: ['Burst'], attempts: 5, error: 'HTTP 503' },
        ],
      }),
      OPTS,
    );
    const statuses = [...page.matchAll(/<tr class="expect ([a-z_]+)">/g)].map((m) => m[1]);
    expect(statuses).toEqual(['arrived', 'late', 'missing', 'not_due', 'awaiting_data', 'in_jeopardy']);
    for (const text of ['>arrived<', '>late<', '>missing<', '>not due yet<', '>awaiting data<', '>in jeopardy<']) expect(page).toContain(text);
    expect(page).toContain('2026-11-23 08:00:00 -03:00 (America/Sao_Paulo)'); // deadline NOW - 1h in the rule's zone
    expect(page).toContain('at <time datetime="2026-11-23T11:50:00.000Z">2026-11-23 08:50:00 -03:00 (America/Sao_Paulo)</time>'); // late arrival
    expect(page).toContain('prod <span class="badge up">up</span>');
    expect(page).toContain('dr <span class="badge down">down</span>');
    expect(page).toContain('<span class="error">unauthorized</span>: HTTP 401');
    expect(page).toContain('32 s');
    // In the history's words: a retried attempt is not called failed.
    expect(page).toContain('oncall (slack) <span class="muted">1 sent, 1 failed, 1 retrying, 1 gave up (recent)</span>');
    expect(page).toContain('<span class="error">HTTP 503</span>');
    expect(page).toContain('<strong>1/2</strong> sources up');
  });

  it('shows silenced and inhibited alerts apart, not counted as firing; links a safe runbook; explains awaiting data', () => {
    const page = renderStatusPage(
      data({
        alerts: [
          alert({ alertname: 'Loud', user: 'A' }, { annotations: { summary: 'loud', runbook_url: '/runbooks/Loud' } }),
          alert({ alertname: 'Quiet', user: 'B' }, { silencedBy: ['s1'], annotations: { summary: 'q', runbook_url: 'javascript:alert(1)' } }),
          alert({ alertname: 'Blocked', user: 'C' }, { inhibitedBy: ['fp-x'] }),
        ],
        expectations: [
          { rule: 'DailyStatementMissing', files: ['EXTRATO_*.RET'], windowStart: NOW - 8 * 3_600_000, timezone: 'UTC', count: 0, minCount: 1, deadline: NOW - 60_000, status: 'awaiting_data' },
        ],
      }),
      OPTS,
    );
    expect(page).toContain('<strong>1</strong> firing, <strong>0</strong> pending, <strong>2</strong> silenced or inhibited');
    const main = page.slice(page.indexOf('id="alerts"'), page.indexOf('id="muted-alerts"'));
    const muted = page.slice(page.indexOf('id="muted-alerts"'), page.indexOf('id="expected"'));
    expect(main).toContain('Loud');
    expect(main).not.toContain('Quiet');
    expect(muted).toContain('Quiet');
    expect(muted).toContain('Blocked');
    expect(muted).toContain('Inhibited by 1 firing alert (inhibit_rules)');
    expect(page).toContain('<a class="runbook" href="/runbooks/Loud" rel="noopener noreferrer">runbook</a>');
    expect(page).not.toContain('javascript:alert');
    expect(page).toContain("the source&#39;s history is not read up to it yet");
    expect(page).toContain('<td data-label="Rule" class="rule">DailyStatementMissing');
  });

  it('with ha: shows the replicas, the leader and which replica polls each source', () => {
    const page = renderStatusPage(
      data({ cluster: { replica: 'tw-1', leader: 'tw-0', leading: false, redisUp: false, replicas: ['tw-0', 'tw-1', 'tw-2'], sources: { east: 'tw-1', west: null } } }),
      OPTS,
    );
    expect(page).toContain('<h3>Replicas <span class="muted">3 live · this is tw-1 · leader: tw-0 · <span class="error">Redis unreachable</span></span></h3>');
    expect(page).toContain('<td data-label="Source">east</td><td data-label="Polled by">tw-1 <span class="muted">(this replica)</span></td>');
    expect(page).toContain('<td data-label="Source">west</td><td data-label="Polled by"><span class="error">nobody (lease free)</span></td>');
    expect(renderStatusPage(data(), OPTS)).not.toContain('id="cluster"');
  });

  it('lists at most MAX_ALERTS_PER_GROUP alerts of one name and says how many more there are', () => {
    const many = Array.from({ length: MAX_ALERTS_PER_GROUP + 7 }, (_, i) => alert({ alertname: 'Burst', user: `U${i}` }));
    const page = renderStatusPage(data({ alerts: many }), OPTS);
    expect(page.match(/<li class="alert /g)).toHaveLength(MAX_ALERTS_PER_GROUP);
    expect(page).toContain('7 more not shown');
    expect(page).toContain(`<strong>${MAX_ALERTS_PER_GROUP + 7}</strong> firing`);
  });

  it('shows fixed notices only, never text from the URL', () => {
    expect(renderStatusPage(data(), { ...OPTS, notice: 'silenced' })).toContain('Silence created.');
    expect(renderStatusPage(data(), { ...OPTS, notice: '<b>phish</b>' })).not.toContain('phish');
  });

  it('says times relative to now both ways', () => {
    expect(formatRelative(NOW - 30_000, NOW)).toBe('30s ago');
    expect(formatRelative(NOW + 3_700_000, NOW)).toBe('in 1h 1m');
    expect(formatRelative(NOW - 90_000_000, NOW)).toBe('1d 1h ago');
  });

  it('says why an alert below its threshold still fires: keep_firing_for, until when', () => {
    const page = renderStatusPage(
      data({
        alerts: [
          {
            labels: { alertname: 'TransferErrorBurst', user: 'BANK1', severity: 'critical' },
            annotations: { summary: '8 failed transfers for BANK1 in 10m' },
            state: 'firing',
            activeAt: NOW - 900_000,
            fingerprint: 'f-held',
            silencedBy: [],
            inhibitedBy: [],
            held: { until: NOW + 120_000, clearedAt: NOW - 180_000, keepFiringFor: 300_000 },
          },
        ],
      }),
      OPTS,
    );
    expect(page).toContain('Below its threshold since');
    expect(page).toContain('kept firing until <time datetime="2026-11-23T12:02:00.000Z">');
    expect(page).toContain('by keep_firing_for (5m), so a short lull does not resolve and page again.');
  });
});
