import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeSlack } from '../../../src/notify/templates/escape.js';
import { buildTemplateContext } from '../../../src/notify/templates/template-context.js';
import { loadTemplateSet } from '../../../src/notify/templates/template-set.js';
import { hasCode } from '../../../src/util/errors.js';
import { burstAlert, notificationOf } from '../integrations/notification-fixture.js';

describe('user templates from files', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tw-tpl-'));
    writeFileSync(join(dir, 'sample-line.hbs'), '{{time}} {{file}} ({{code}})');
    writeFileSync(
      join(dir, 'slack-text.hbs'),
      '{{title}} in {{timezone}}{{#each alerts}}{{#if count}} count={{count}} window={{window}}{{/if}}{{#each samples}}\n- {{> sample-line}}{{/each}}{{/each}}',
    );
    writeFileSync(join(dir, 'broken.hbs'), '{{#if}}');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names templates after their files, shares them as partials, and sees escaped values', async () => {
    const set = await loadTemplateSet([join(dir, 'sample-line.hbs'), join(dir, 'slack-text.hbs')]);
    expect(set.names().sort()).toEqual(['sample-line', 'slack-text']);
    const ctx = buildTemplateContext(notificationOf([burstAlert()]), escapeSlack);
    expect(set.resolve('slack-text')(ctx)).toBe(
      '[FIRING:1] TransferErrorBurst {mft_instance=PROD1, severity=critical, source=prod, user=BANK1} in UTC count=7 window=10m\n' +
        '- 2026-11-22 13:04:04 UTC &lt;!channel&gt;.RET (12)\n' +
        '- 2026-11-22 13:04:03 UTC PAY_002.RET (12)',
    );
  });

  it('compiles a value that names no loaded template as inline source', async () => {
    const set = await loadTemplateSet([]);
    const ctx = buildTemplateContext(notificationOf([burstAlert()]), escapeSlack);
    expect(set.resolve('{{alertname}}: {{commonLabels.user}}')(ctx)).toBe('TransferErrorBurst: BANK1');
  });

  it('refuses an unknown template name instead of sending it as text', async () => {
    const set = await loadTemplateSet([join(dir, 'sample-line.hbs')]);
    let err: unknown;
    try {
      set.resolve('slack-txt');
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'template_not_found')).toBe(true);
    expect((err as Error).message).toContain('sample-line');
  });

  it('reports a syntax error with the file name, and a missing file, as typed errors', async () => {
    const broken = await loadTemplateSet([join(dir, 'broken.hbs')]).catch((e: unknown) => e);
    expect(hasCode(broken, 'template_invalid')).toBe(true);
    expect((broken as Error).message).toContain('broken.hbs');
    const missing = await loadTemplateSet([join(dir, 'nope.hbs')]).catch((e: unknown) => e);
    expect(hasCode(missing, 'template_unreadable')).toBe(true);
  });

  it('refuses two files with the same template name', async () => {
    const other = mkdtempSync(join(tmpdir(), 'tw-tpl2-'));
    try {
      writeFileSync(join(other, 'slack-text.hbs'), 'x');
      const err = await loadTemplateSet([join(dir, 'slack-text.hbs'), join(other, 'slack-text.hbs')]).catch((e: unknown) => e);
      expect(hasCode(err, 'template_duplicate')).toBe(true);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
