import { describe, expect, it } from 'vitest';
import { buildNotification } from '../../src/notify/build-notification.js';
import { AlertGroup } from '../../src/notify/dispatch/alert-group.js';
import { buildRoute } from '../../src/notify/dispatch/route.js';
import { defaultEmailHtml, defaultEmailText } from '../../src/notify/integrations/email/default-email-template.js';
import { defaultSlackBlocks } from '../../src/notify/integrations/slack/default-slack-template.js';
import { webhookPayload } from '../../src/notify/integrations/webhook/webhook-integration.js';
import { alertmanagerAlerts } from '../../src/notify/integrations/alertmanager/alertmanager-integration.js';
import { defaultConsoleLine } from '../../src/notify/integrations/console/default-console-template.js';
import { escapeHtml, escapePlain, escapeSlack } from '../../src/notify/templates/escape.js';
import { buildTemplateContext } from '../../src/notify/templates/template-context.js';
import { firing } from './helpers.js';

const route = buildRoute({ receiver: 'ops', group_by: ['alertname'], matchers: [], continue: false, mute_time_intervals: [], active_time_intervals: [], routes: [] }, ['ops'], []);
const settings = { externalUrl: 'https://tw.example:9464', displayTimezone: 'UTC' };

function notificationWith(runbook: string) {
  const alert = firing({ alertname: 'TransferErrorBurst', user: 'BANK1' }, 0, { annotations: { summary: 's', runbook_url: runbook } });
  const group = new AlertGroup(route, '{}:{alertname="TransferErrorBurst"}', { alertname: 'TransferErrorBurst' }, 0);
  return buildNotification(settings, 'ops', group, [alert]);
}

describe('runbook_url in every channel', () => {
  it('a relative runbook_url becomes a link on the external URL in Slack, email, webhook, Alertmanager and the console', () => {
    const n = notificationWith('/runbooks/TransferErrorBurst');
    const url = 'https://tw.example:9464/runbooks/TransferErrorBurst';
    expect(n.alerts[0]?.annotations.runbook_url).toBe(url);
    expect(JSON.stringify(defaultSlackBlocks(buildTemplateContext(n, escapeSlack)))).toContain(`Runbook: <${url}|runbook>`);
    expect(defaultEmailText(buildTemplateContext(n, escapePlain))).toContain(`Runbook: ${url}`);
    expect(defaultEmailHtml(buildTemplateContext(n, escapeHtml))).toContain(`<a href="${url}">${url}</a>`);
    expect(webhookPayload(n, 0).alerts[0]?.annotations.runbook_url).toBe(url);
    expect(alertmanagerAlerts(n, 0, 60_000)[0]?.annotations.runbook_url).toBe(url);
    expect(defaultConsoleLine(buildTemplateContext(n, escapePlain))).toContain(`runbook: ${url}`);
  });

  it('keeps an absolute http(s) link and drops anything else (a templated value cannot become javascript:)', () => {
    expect(notificationWith('http://wiki.example/rb?a=1').alerts[0]?.annotations.runbook_url).toBe('http://wiki.example/rb?a=1');
    for (const bad of ['javascript:alert(1)', 'data:text/html,<script>', 'file:///etc/passwd']) {
      const n = notificationWith(bad);
      expect(n.alerts[0]?.annotations.runbook_url, bad).toBeUndefined();
      expect(defaultEmailHtml(buildTemplateContext(n, escapeHtml))).not.toContain('Runbook');
    }
  });

  it('titles name the labels that identify the group', () => {
    const n = notificationWith('/x');
    expect(buildTemplateContext(n, escapePlain).title).toBe('[FIRING:1] TransferErrorBurst {user=BANK1}');
  });
});
