import type { IncomingWebhookSendArguments } from '@slack/webhook';
import { alertLines, type TextStyle } from '../../templates/default-text.js';
import type { TemplateContext } from '../../templates/template-context.js';

/** Slack's limits: 3000 characters per section text, 50 blocks per message. */
const SECTION_MAX = 3000;
const MAX_ALERT_BLOCKS = 20;

const mrkdwn: TextStyle = {
  bold: (t) => `*${t}*`,
  code: (t) => (t ? `\`${t.replace(/`/g, "'")}\`` : t),
  // The URL is mrkdwn-escaped already; `|` would end the link's address early.
  link: (url, text) => `<${url.replace(/\|/g, '%7C')}|${text}>`,
};

/** Slack block kit objects, as @slack/webhook types them. */
export type SlackBlock = NonNullable<IncomingWebhookSendArguments['blocks']>[number];

/** `[FIRING:2] TransferErrorBurst {labels}` plus the summary of a lone alert: the notification line. */
export function defaultSlackText(ctx: TemplateContext): string {
  const first = ctx.alerts[0];
  const summary = ctx.alerts.length === 1 && first?.summary ? ` ${first.summary}` : '';
  return `${ctx.title}${summary}`;
}

/** The action id of the Acknowledge button: its clicks come back over Socket Mode (slack-ack-listener.ts). */
export const SLACK_ACK_ACTION = 'tw_ack';

/**
 * One header section, one section per alert (count, window, samples), one context line with the zone; with
 * `ackToken` (a receiver with `app_token`, alerts nobody acknowledged), an Acknowledge button.
 */
export function defaultSlackBlocks(ctx: TemplateContext, ackToken?: string): SlackBlock[] {
  const section = (text: string): SlackBlock => ({
    type: 'section',
    text: { type: 'mrkdwn', text: text.length > SECTION_MAX ? `${text.slice(0, SECTION_MAX - 1)}…` : text },
  });
  const blocks: SlackBlock[] = [section(`*${ctx.title}*`)];
  for (const a of ctx.alerts.slice(0, MAX_ALERT_BLOCKS)) {
    blocks.push(section(alertLines(a, mrkdwn).join('\n')));
  }
  if (ctx.alerts.length > MAX_ALERT_BLOCKS) {
    blocks.push(section(`…and ${ctx.alerts.length - MAX_ALERT_BLOCKS} more alerts`));
  }
  const footer = [`Times in ${ctx.timezone}`];
  if (ctx.externalUrl) footer.push(`<${ctx.externalUrl}|transfer-watch>`);
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: footer.join(' · ') }] });
  if (ackToken !== undefined && ctx.status === 'firing') {
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', action_id: SLACK_ACK_ACTION, style: 'primary', text: { type: 'plain_text', text: 'Acknowledge' }, value: ackToken }],
    } as SlackBlock);
  }
  return blocks;
}
