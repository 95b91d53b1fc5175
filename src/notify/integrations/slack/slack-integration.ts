import type { IncomingWebhookSendArguments } from '@slack/webhook';
import { SLACK_SECRET_PATHS, slackConfigSchema, type SlackConfig } from './slack-schema.js';
import { defineIntegration } from '../integration-definition.js';
import { NotifyError, type Integration, type Notification } from '../../notification.js';
import { defaultSlackBlocks, defaultSlackText } from './default-slack-template.js';
import { escapeSlack } from '../../templates/escape.js';
import { buildTemplateContext } from '../../templates/template-context.js';
import { resolveUserTemplate } from '../../templates/template-set.js';
import { abortable } from '../shared/abortable.js';
import { httpStatusError, networkError } from '../shared/http-failure.js';
import type { IntegrationDeps } from '../shared/integration-deps.js';

export const SLACK_DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Slack incoming webhook (via @slack/webhook). The text starts `[FIRING:N] alertname` or
 * `[RESOLVED] alertname`; blocks add labels, summary, and for bursts the count, window and samples.
 * A user `template` replaces the text and the blocks are then left out, so the template is what people see.
 * Every value from the monitored service is mrkdwn-escaped, so `<!channel>` in a file name pings nobody.
 */
export function createSlackIntegration(config: SlackConfig, deps: IntegrationDeps): Integration {
  const userTemplate = resolveUserTemplate(config.template, deps.templates);
  // @slack/webhook (and axios under it) is loaded when a Slack receiver is configured, not by every daemon.
  const webhook = import('@slack/webhook').then(({ IncomingWebhook }) => {
    // Retries are the dispatcher's (persisted, Retry-After aware); the client must not retry on its own.
    const client = new IncomingWebhook(config.webhook_url, {
      timeout: deps.fetchTimeoutMs ?? SLACK_DEFAULT_TIMEOUT_MS,
      retryConfig: { retries: 0 },
    });
    // @slack/webhook copies its defaults into every payload, so `timeout` would be posted to Slack as a
    // message field. Its HTTP client already holds the timeout; drop it from the payload defaults.
    const payloadDefaults: unknown = Reflect.get(client, 'defaults');
    if (typeof payloadDefaults === 'object' && payloadDefaults !== null) Reflect.deleteProperty(payloadDefaults, 'timeout');
    return client;
  });
  // Awaited by every send; a failed load surfaces there, not as an unhandled rejection.
  webhook.catch(() => undefined);

  function message(n: Notification): IncomingWebhookSendArguments {
    const ctx = buildTemplateContext(n, escapeSlack);
    const msg: IncomingWebhookSendArguments = userTemplate
      ? { text: userTemplate(ctx) }
      : { text: defaultSlackText(ctx), blocks: defaultSlackBlocks(ctx, config.app_token !== undefined ? n.ackToken : undefined) };
    if (config.channel) msg.channel = config.channel;
    if (config.username) msg.username = config.username;
    if (config.icon_emoji) msg.icon_emoji = config.icon_emoji;
    return msg;
  }

  return {
    kind: 'slack',
    sendResolved: config.send_resolved,
    async send(n, signal) {
      const sending = (await webhook).send(message(n)).catch((err: unknown) => {
        throw slackError(err, config.webhook_url, deps);
      });
      await abortable('slack', sending, signal);
    },
  };
}

/**
 * @slack/webhook errors carry the axios error, whose config holds the webhook URL (the secret):
 * only the status and Retry-After are read from it, and it is never kept as a cause.
 */
function slackError(err: unknown, url: string, deps: IntegrationDeps): NotifyError {
  const response = field(field(err, 'original'), 'response');
  const status = field(response, 'status');
  if (typeof status === 'number') {
    const headers = field(response, 'headers');
    const retryAfter = field(headers, 'retry-after') ?? callGet(headers, 'retry-after');
    return httpStatusError('slack', url, status, retryAfter, deps.clock);
  }
  if (err instanceof NotifyError) return err;
  const code = field(err, 'code');
  if (code === 'slack_webhook_request_error') return networkError('slack', url, err);
  // Anything else failed before a request was made (bad payload): trying again cannot help.
  const scrubbed = networkError('slack', url, err);
  return new NotifyError(scrubbed.message, false);
}

function field(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const found: unknown = Reflect.get(value, key);
  return found;
}

/** axios headers are an AxiosHeaders instance whose values may need `get()`. */
function callGet(headers: unknown, key: string): unknown {
  const get = field(headers, 'get');
  if (typeof get !== 'function') return undefined;
  const found: unknown = Reflect.apply(get, headers, [key]);
  return found;
}

export const slackIntegration = defineIntegration({
  kind: 'slack',
  schema: slackConfigSchema,
  secretPaths: SLACK_SECRET_PATHS,
  create: createSlackIntegration,
});
