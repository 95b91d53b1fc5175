import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { buildNotification } from '../../src/notify/build-notification.js';
import { AlertGroup } from '../../src/notify/dispatch/alert-group.js';
import { buildRoute } from '../../src/notify/dispatch/route.js';
import { alertmanagerAlerts } from '../../src/notify/integrations/alertmanager/alertmanager-integration.js';
import { defaultConsoleLine } from '../../src/notify/integrations/console/default-console-template.js';
import { defaultEmailHtml, defaultEmailSubject, defaultEmailText } from '../../src/notify/integrations/email/default-email-template.js';
import { msteamsMessage } from '../../src/notify/integrations/msteams/msteams-integration.js';
import { pagerdutyEvent } from '../../src/notify/integrations/pagerduty/pagerduty-event.js';
import { pagerdutyConfigSchema } from '../../src/notify/integrations/pagerduty/pagerduty-schema.js';
import { defaultSlackBlocks, defaultSlackText } from '../../src/notify/integrations/slack/default-slack-template.js';
import { webhookPayload } from '../../src/notify/integrations/webhook/webhook-integration.js';
import type { Notification } from '../../src/notify/notification.js';
import { escapeHtml, escapePlain, escapeSlack } from '../../src/notify/templates/escape.js';
import { buildTemplateContext } from '../../src/notify/templates/template-context.js';
import { ruleFileSchema } from '../../src/rules/rule-file-schema.js';
import { RuleEngine } from '../../src/rules/rule-engine.js';
import type { RuleDefinition } from '../../src/rules/registry.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { transfer } from '../rules/transfer-fixture.js';

/**
 * Golden messages: for each rule type, its firing and resolved notification (and missing_file's phase change,
 * "in jeopardy" giving way to "missing") rendered by every channel's default template, from alerts the real
 * engine made. The files under test/notify/golden/ are the reviewed text; a change to any message shows up
 * there as a diff. Beyond the files, every human message is checked for the rules of issue 24: every time it
 * shows appears once, and in the reader's zone (America/Sao_Paulo here) unless it is a deadline in the rule's.
 */

const DISPLAY = 'America/Sao_Paulo';
const MIN = 60_000;
const T0 = Date.parse('2026-11-25T12:00:00Z');
const route = buildRoute({ receiver: 'ops', group_by: ['alertname', 'user'], matchers: [], continue: false, mute_time_intervals: [], active_time_intervals: [], routes: [] }, ['ops'], []);

type Input = { at: number; user?: string; file?: string; code?: number; size?: number; event?: 'reception' | 'transmission'; instance?: string };

function rulesOf(rule: Record<string, unknown>): RuleDefinition[] {
  return ruleFileSchema().parse({ rules: [{ severity: 'warning', annotations: { runbook_url: `/runbooks/${String(rule['name'])}` }, ...rule }] }).rules as RuleDefinition[];
}

/** Runs the engine minute by minute and returns the alert store's alerts at each of `at`. */
function alertsAt(rule: Record<string, unknown>, inputs: Input[], at: number[], start = T0, display = DISPLAY): Map<number, Alert[]> {
  const clock = new ManualClock(start);
  const engine = new RuleEngine(rulesOf(rule), { clock, logger: silentLogger(), sources: ['prod'], displayTimezone: display });
  const store = new AlertStore({ clock, logger: silentLogger(), state: new MemoryStateStore() });
  const transfers = inputs
    .map((i, n) =>
      transfer({
        time: i.at,
        id: `t${n}`,
        source: 'prod',
        user: i.user ?? 'BANK1',
        instance: i.instance ?? 'PROD01',
        file: i.file ?? `/in/BANK1/RET_${n}.RET`,
        code: i.code ?? 21,
        result: (i.code ?? 21) === 0 ? 'success' : 'error',
        size: i.size ?? 1000,
        message: (i.code ?? 21) === 0 ? 'OK' : 'Timeout waiting for partner response (120 s)',
        event: i.event ?? 'reception',
        eventCode: (i.event ?? 'reception') === 'reception' ? 7 : 5,
      }),
    )
    .sort((a, b) => a.time - b.time);
  const out = new Map<number, Alert[]>();
  const last = Math.max(...at);
  let next = 0;
  for (let now = start; now <= last; now += MIN) {
    clock.set(now);
    while (next < transfers.length && (transfers[next]?.time ?? Infinity) <= now) engine.observe(transfers[next++]!);
    store.apply(engine.evaluate(now, { completeUntil: () => now, completeFrom: () => start }), now);
    if (at.includes(now)) out.set(now, store.alerts().map((a) => ({ ...a })));
  }
  return out;
}

function notification(alerts: Alert[], display = DISPLAY): Notification {
  const first = alerts[0];
  if (!first) throw new Error('no alerts');
  const group = new AlertGroup(route, `{}:{alertname="${first.labels.alertname}"}`, { alertname: first.labels.alertname ?? '', user: first.labels.user ?? '' }, 0);
  return buildNotification({ externalUrl: 'https://tw.example', displayTimezone: display }, 'ops', group, alerts);
}

/** Every rendering of one notification, as reviewed text. */
function render(n: Notification): string {
  const pd = pagerdutyConfigSchema.parse({ routing_key: 'R'.repeat(32) });
  const sections: Array<[string, string]> = [
    ['console', defaultConsoleLine(buildTemplateContext(n, escapePlain))],
    ['slack text', defaultSlackText(buildTemplateContext(n, escapeSlack))],
    ['slack blocks', JSON.stringify(defaultSlackBlocks(buildTemplateContext(n, escapeSlack)), null, 2)],
    ['email subject', defaultEmailSubject(buildTemplateContext(n, escapePlain))],
    ['email text', defaultEmailText(buildTemplateContext(n, escapePlain))],
    ['email html', defaultEmailHtml(buildTemplateContext(n, escapeHtml))],
    ['msteams', JSON.stringify(msteamsMessage(n), null, 2)],
    ['pagerduty', JSON.stringify(pagerdutyEvent(n, pd, T0), null, 2)],
    ['webhook', JSON.stringify(webhookPayload(n, 0), null, 2)],
    ['alertmanager', JSON.stringify(alertmanagerAlerts(n, T0, 60_000), null, 2)],
  ];
  return sections.map(([name, text]) => `===== ${name}\n${text.trimEnd()}\n`).join('\n');
}

const TIME = /(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (UTC|[+-]\d{2}:\d{2} \(([^)]+)\))/g;

/**
 * The human texts (console, email text) of one notification: every time in the reader's zone, or a deadline in
 * the rule's (named); no instant shown in two zones in one alert's text; no instant twice on one line.
 */
function checkTimes(n: Notification, ruleZone: string): void {
  const display = n.displayTimezone;
  for (const [channel, text] of [
    ['console', defaultConsoleLine(buildTemplateContext(n, escapePlain))],
    ['email', defaultEmailText(buildTemplateContext(n, escapePlain))],
  ] as const) {
    for (const block of channel === 'console' ? [text] : text.split('\n\n')) {
      const zoneOf = new Map<number, string>();
      for (const line of block.split('\n')) {
        const onLine = new Set<number>();
        for (const m of line.matchAll(TIME)) {
          const zone = m[3] ?? 'UTC';
          expect([display, ruleZone], `${channel}: ${m[0]} in:\n${block}`).toContain(zone);
          const instant = new Date(`${(m[1] ?? '').replace(' ', 'T')}${zone === 'UTC' ? 'Z' : (m[2] ?? '').slice(0, 6)}`).getTime();
          if (onLine.has(instant)) expect.fail(`${channel}: ${m[0]} twice on one line:\n${line}`);
          onLine.add(instant);
          const before = zoneOf.get(instant);
          if (before !== undefined && before !== zone) expect.fail(`${channel}: ${m[0]} also shown in ${before}:\n${block}`);
          zoneOf.set(instant, zone);
        }
      }
    }
  }
}

describe('golden messages per rule type and channel', () => {
  const cases: Array<{ name: string; rule: Record<string, unknown>; inputs: Input[]; firingAt: number; resolvedAt: number; ruleZone?: string }> = [
    {
      name: 'error_burst',
      rule: { name: 'TransferErrorBurst', type: 'error_burst', group_by: ['user'], threshold: 3, window: '10m', annotations: { summary: '{{count}} failed transfers for {{labels.user}} in {{window}}' } },
      inputs: [1, 2, 3].map((m) => ({ at: T0 + m * MIN, file: `/in/BANK1/RET_00${m}.RET` })),
      firingAt: T0 + 4 * MIN,
      resolvedAt: T0 + 15 * MIN,
    },
    {
      name: 'duplicate_file',
      rule: { name: 'DuplicateRemittance', type: 'duplicate_file', group_by: ['user'], window: '1d', match: { event: ['transmission'] } },
      inputs: [
        { at: T0 + MIN, code: 0, event: 'transmission', file: '/out/BANK1/REM_1.REM', size: 2400 },
        { at: T0 + 3 * MIN, code: 0, event: 'transmission', file: '/out/BANK1/REM_1.REM', size: 2400 },
      ],
      firingAt: T0 + 4 * MIN,
      resolvedAt: T0 + 4 * MIN + 86_400_000,
    },
    {
      name: 'size_anomaly',
      rule: { name: 'ReturnFileSize', type: 'size_anomaly', group_by: ['user'], zero_size: true, resolve_after: '10m' },
      inputs: [{ at: T0 + MIN, code: 0, size: 0, file: '/in/BANK1/RET_EMPTY.RET' }],
      firingAt: T0 + 2 * MIN,
      resolvedAt: T0 + 12 * MIN,
    },
    {
      name: 'failure_ratio',
      rule: { name: 'PartnerFailureRatio', type: 'failure_ratio', group_by: ['user'], threshold: 0.5, min_total: 4, window: '10m' },
      inputs: [
        ...[1, 2, 3].map((m) => ({ at: T0 + m * MIN })),
        { at: T0 + 2 * MIN, code: 0 },
      ],
      firingAt: T0 + 4 * MIN,
      resolvedAt: T0 + 15 * MIN,
    },
    {
      name: 'error_code',
      rule: { name: 'PartnerAuthenticationCode', type: 'error_code', codes: [36], group_by: ['user'], resolve_after: '10m' },
      inputs: [{ at: T0 + MIN, code: 36 }],
      firingAt: T0 + 2 * MIN,
      resolvedAt: T0 + 12 * MIN,
    },
    {
      name: 'stuck_partner',
      rule: { name: 'PartnerStuck', type: 'stuck_partner', group_by: ['user'], failing_for: '10m', min_failures: 3 },
      inputs: [...[1, 5, 12].map((m) => ({ at: T0 + m * MIN })), { at: T0 + 20 * MIN, code: 0 }],
      firingAt: T0 + 13 * MIN,
      resolvedAt: T0 + 21 * MIN,
    },
    {
      name: 'volume',
      rule: { name: 'BankQuiet', type: 'volume', for_each: { label: 'user', values: ['BANK1'] }, result: 'any', window: '30m', min: 1 },
      inputs: [{ at: T0 + 45 * MIN, code: 0 }],
      firingAt: T0 + 40 * MIN,
      resolvedAt: T0 + 46 * MIN,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: firing and resolved`, async () => {
      const at = alertsAt(c.rule, c.inputs, [c.firingAt, c.resolvedAt]);
      const firing = (at.get(c.firingAt) ?? []).filter((a) => a.state === 'firing');
      const resolved = (at.get(c.resolvedAt) ?? []).filter((a) => a.state === 'resolved');
      expect(firing, 'firing').toHaveLength(1);
      expect(resolved, 'resolved').toHaveLength(1);
      for (const [phase, alerts] of [['firing', firing], ['resolved', resolved]] as const) {
        const n = notification(alerts);
        checkTimes(n, c.ruleZone ?? DISPLAY);
        await expect(render(n)).toMatchFileSnapshot(`golden/${c.name}.${phase}.txt`);
      }
    });
  }

  it('missing_file: jeopardy, the phase change to missing (one story), and resolved by a late arrival', async () => {
    // The rule reads its deadline in São Paulo; the reader reads UTC here, so the deadline is named in its zone.
    const rule = {
      name: 'DailyStatementMissing',
      type: 'missing_file',
      match: { file: ['EXTRATO_*.RET'] },
      for_each: { label: 'user', values: ['BANK2'] },
      deadline: '0 8 * * 1-5',
      timezone: 'America/Sao_Paulo',
      window: '8h',
      warn_before: '30m',
      annotations: { summary: '{{#if arrived_at}}Statement from {{labels.user}} arrived late at {{arrived_at}}{{else}}No statement from {{labels.user}} by {{deadline}}{{/if}}' },
      warn_annotations: { summary: 'Statement from {{labels.user}} not received yet; deadline {{deadline}}' },
    };
    const deadline = Date.parse('2026-11-25T11:00:00Z'); // 08:00 in São Paulo
    const start = deadline - 9 * 3_600_000;
    const at = alertsAt(rule, [{ at: deadline + 38 * 1000 + 5 * MIN, user: 'BANK2', code: 0, file: '/in/BANK2/EXTRATO_20261125.RET' }], [deadline - 29 * MIN, deadline + MIN, deadline + 6 * MIN], start, 'UTC');
    const jeopardy = (at.get(deadline - 29 * MIN) ?? []).filter((a) => a.state === 'firing');
    expect(jeopardy.map((a) => a.labels.phase)).toEqual(['jeopardy']);
    // At the deadline the warning resolves and the alert fires: one notification carries both.
    const change = (at.get(deadline + MIN) ?? []).filter((a) => a.state === 'firing' || a.labels.phase === 'jeopardy');
    expect(change.map((a) => `${a.state}:${a.labels.phase ?? 'missing'}`).sort()).toEqual(['firing:missing', 'resolved:jeopardy']);
    const late = (at.get(deadline + 6 * MIN) ?? []).filter((a) => a.state === 'resolved' && a.labels.phase === undefined);
    expect(late).toHaveLength(1);

    const changeNote = notification(change, 'UTC');
    const changeText = defaultConsoleLine(buildTemplateContext(changeNote, escapePlain));
    // One story: no "resolved" warning, no "1 firing, 1 resolved".
    expect(changeText).toMatch(/^\[FIRING:1\] DailyStatementMissing \{/);
    expect(changeText).toContain('(in jeopardy since 2026-11-25 10:30:00 UTC)');
    expect(changeText).toContain('No statement from BANK2 by 2026-11-25 08:00:00 -03:00 (America/Sao_Paulo)');
    expect(changeText).not.toContain('resolved');
    // Machines still get both alerts, the warning resolved.
    expect(webhookPayload(changeNote, 0).alerts.map((a) => `${a.status}:${a.labels.phase ?? ''}`).sort()).toEqual(['firing:', 'resolved:jeopardy']);

    for (const [phase, alerts] of [['jeopardy', jeopardy], ['phase-change', change], ['resolved', late]] as const) {
      const n = notification(alerts, 'UTC');
      checkTimes(n, 'America/Sao_Paulo');
      await expect(render(n)).toMatchFileSnapshot(`golden/missing_file.${phase}.txt`);
    }
    const lateLine = defaultConsoleLine(buildTemplateContext(notification(late, 'UTC'), escapePlain));
    expect(lateLine).toContain('arrived late at 2026-11-25 11:05:38 UTC');
    expect(lateLine.match(/11:05:38/g)).toHaveLength(1);
  });
});
