import { alertLines, type TextStyle } from '../../templates/default-text.js';
import type { AlertContext, TemplateContext } from '../../templates/template-context.js';

/** An Adaptive Card element (https://adaptivecards.io/explorer/), as far as the default card uses them. */
export type CardElement = Record<string, unknown>;

/** Teams renders a Markdown subset in TextBlocks; values are already escaped for it (escapeMarkdown). */
const markdown: TextStyle = {
  bold: (t) => `**${t}**`,
  code: (t) => t,
  link: (url, text) => `[${text}](${url})`,
};

const MAX_ALERTS = 20;

/**
 * The default card: a coloured title (`[FIRING:N] alertname {labels}`), one container per alert with its lines
 * (labels, summary, count and window, samples, runbook link), and a footer with the zone and a link back.
 */
export function defaultMsteamsCard(ctx: TemplateContext, text?: string): CardElement {
  const body: CardElement[] = [
    { type: 'TextBlock', text: ctx.title, weight: 'Bolder', size: 'Medium', wrap: true, color: ctx.status === 'firing' ? 'Attention' : 'Good' },
  ];
  if (text !== undefined) body.push({ type: 'TextBlock', text, wrap: true });
  else {
    for (const a of ctx.alerts.slice(0, MAX_ALERTS)) body.push(alertContainer(a));
    if (ctx.alerts.length > MAX_ALERTS) body.push({ type: 'TextBlock', text: `…and ${ctx.alerts.length - MAX_ALERTS} more alerts`, wrap: true });
  }
  body.push({ type: 'TextBlock', text: `Times in ${ctx.timezone}`, isSubtle: true, size: 'Small', wrap: true });
  const card: CardElement = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    msteams: { width: 'Full' },
    body,
  };
  if (ctx.externalUrl) card.actions = [{ type: 'Action.OpenUrl', title: 'Open transfer-watch', url: ctx.externalUrl }];
  return card;
}

function alertContainer(a: AlertContext): CardElement {
  const [head, ...rest] = alertLines(a, markdown);
  return {
    type: 'Container',
    separator: true,
    items: [
      { type: 'TextBlock', text: head ?? '', wrap: true, weight: 'Bolder', color: a.status === 'firing' ? 'Attention' : 'Good' },
      // One line per block: Teams joins lines of one TextBlock unless they are separated by a blank line.
      ...rest.map((line) => ({ type: 'TextBlock', text: line, wrap: true, spacing: 'None' })),
    ],
  };
}
