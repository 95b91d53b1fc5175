import { describe, expect, it } from 'vitest';
import { buildNotification } from '../../src/notify/build-notification.js';
import { AlertGroup } from '../../src/notify/dispatch/alert-group.js';
import { buildRoute } from '../../src/notify/dispatch/route.js';
import { defaultEmailHtml, defaultEmailText } from '../../src/notify/integrations/email/default-email-template.js';
import { escapeHtml, escapePlain } from '../../src/notify/templates/escape.js';
import { buildTemplateContext } from '../../src/notify/templates/template-context.js';
import { firing } from './helpers.js';

const route = buildRoute({ receiver: 'ops', group_by: ['alertname'], matchers: [], continue: false, mute_time_intervals: [], active_time_intervals: [], routes: [] }, ['ops'], []);

describe('message size', () => {
  it('a mail for a group of 2,000 alerts describes 50 and counts the rest, in text and HTML', () => {
    const alerts = Array.from({ length: 2_000 }, (_, i) => firing({ alertname: 'DuplicateRemittance', file: `/in/F${i}.RET` }, 0, { annotations: { summary: `copy ${i}` } }));
    const group = new AlertGroup(route, '{}:{alertname="DuplicateRemittance"}', { alertname: 'DuplicateRemittance' }, 0);
    const n = buildNotification({ externalUrl: '', displayTimezone: 'UTC' }, 'ops', group, alerts);
    const text = defaultEmailText(buildTemplateContext(n, escapePlain));
    const html = defaultEmailHtml(buildTemplateContext(n, escapeHtml));
    expect(text).toMatch(/^\[FIRING:2000\] DuplicateRemittance/);
    expect(text.match(/\[FIRING\] DuplicateRemittance/g)).toHaveLength(50);
    expect(text).toContain('…and 1950 more alerts in this group (all of them are on the status page)');
    expect(html.match(/<h3>\[FIRING\] DuplicateRemittance<\/h3>/g)).toHaveLength(50);
    expect(html).toContain('…and 1950 more alerts in this group');
    expect(text.length).toBeLessThan(50_000);
  });
});
