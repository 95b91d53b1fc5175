import { escapeMarkdown } from '../../templates/escape.js';
import { buildTemplateContext } from '../../templates/template-context.js';
import { resolveUserTemplate } from '../../templates/template-set.js';
import type { Integration, Notification } from '../../notification.js';
import { defineIntegration } from '../integration-definition.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';
import { postJson } from '../shared/post-json.js';
import { defaultMsteamsCard } from './default-msteams-card.js';
import { MSTEAMS_SECRET_PATHS, msteamsConfigSchema, type MsteamsConfig } from './msteams-schema.js';

/** The message Teams Workflows and incoming webhooks take: one Adaptive Card attachment. */
export function msteamsMessage(n: Notification, text?: (ctx: ReturnType<typeof buildTemplateContext>) => string): unknown {
  const ctx = buildTemplateContext(n, escapeMarkdown);
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: defaultMsteamsCard(ctx, text ? text(ctx) : undefined),
      },
    ],
  };
}

/**
 * Microsoft Teams through a Workflows (or legacy incoming) webhook. Values from the monitored service are
 * Markdown-escaped, so a file called `[click](http://evil)` stays text. The URL is secret and never logged.
 */
export function createMsteamsIntegration(config: MsteamsConfig, deps: IntegrationDeps): Integration {
  const textTemplate = resolveUserTemplate(config.text_template, deps.templates);
  return {
    kind: 'msteams',
    sendResolved: config.send_resolved,
    async send(n, signal) {
      await postJson(config.webhook_url, msteamsMessage(n, textTemplate), {
        kind: 'msteams',
        timeoutMs: config.timeout,
        clock: deps.clock,
        idempotencyKey: n.idempotencyKey,
        ...(signal ? { signal } : {}),
      });
    },
  };
}

export const msteamsIntegration = defineIntegration({
  kind: 'msteams',
  schema: msteamsConfigSchema,
  secretPaths: MSTEAMS_SECRET_PATHS,
  create: createMsteamsIntegration,
});
