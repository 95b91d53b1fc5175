import { sanitizeHeader } from '../../templates/escape.js';
import { defaultText, MAX_ALERTS_DESCRIBED, moreAlertsLine } from '../../templates/default-text.js';
import { alreadyTold, type AlertContext, type TemplateContext } from '../../templates/template-context.js';

/** `[FIRING:1] TransferErrorBurst {labels}`: the same start as Slack's text. Built from a header-safe context. */
export function defaultEmailSubject(ctx: TemplateContext): string {
  return sanitizeHeader(ctx.title);
}

/** The text/plain part. */
export function defaultEmailText(ctx: TemplateContext): string {
  return defaultText(ctx);
}

/** The text/html part, from an HTML-escaped context: every value is already safe to place in HTML. */
export function defaultEmailHtml(ctx: TemplateContext): string {
  const color = ctx.status === 'firing' ? '#c0392b' : '#27ae60';
  const more = moreAlertsLine(ctx);
  const alerts = ctx.alerts.slice(0, MAX_ALERTS_DESCRIBED).map(alertHtml).join('\n') + (more ? `\n<p>${more}</p>` : '');
  const link = ctx.externalUrl ? ` · <a href="${ctx.externalUrl}">transfer-watch</a>` : '';
  // A link to a confirmation page (GET shows, POST acknowledges): a mail scanner that follows it acknowledges nothing.
  const ack = ctx.ackUrl ? `<p><a href="${ctx.ackUrl}" style="display:inline-block;padding:6px 12px;border:1px solid #2c6fbb;border-radius:4px;color:#2c6fbb;text-decoration:none;">Acknowledge…</a> <span style="color:#666;">(no repeats and no escalation while they fire; opens a page to confirm)</span></p>` : '';
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${ctx.title}</title></head>
<body style="font-family: sans-serif; font-size: 14px;">
<h2 style="color: ${color};">${ctx.title}</h2>
${ack ? `${ack}\n` : ''}${alerts}
<p style="color: #666;">Times are shown in ${ctx.timezone}${link}</p>
</body></html>
`;
}

function alertHtml(a: AlertContext): string {
  const rows: string[] = [];
  const row = (k: string, v: string): void => {
    rows.push(`<tr><th align="left" valign="top">${k}</th><td>${v}</td></tr>`);
  };
  if (a.labelsText) row('Labels', a.labelsText);
  if (a.summary) row('Summary', a.summary);
  if (a.description) row('Description', a.description);
  if (a.isMissingFile) row('Arrived', `${a.count ?? 0} of ${a.expected ?? 1} expected${a.window ? ` in the ${a.window} before the deadline` : ''}`);
  else if (a.count !== undefined) row('Count', `${a.count} failed transfer${a.count === 1 ? '' : 's'}${a.windowText ? ` in ${a.windowText}` : ''}`);
  else if (a.windowText) row('Window', a.windowText);
  // Each time once: what the summary or description says is not said again.
  if (a.deadline && !alreadyTold(a, a.deadline)) row('Deadline', a.deadline);
  if (a.previousPhase) row('Before', a.previousPhase);
  if (a.status === 'resolved' && a.arrivedAt && !alreadyTold(a, a.arrivedAt)) row('Resolved', `the file arrived late, at ${a.arrivedAt}`);
  if (a.ack) row('Acknowledged', `by ${a.ack}`);
  if (a.runbookUrl) row('Runbook', `<a href="${a.runbookUrl}">${a.runbookUrl}</a>`);
  if (!a.sinceIsDeadline) row('Active since', a.startsAt);
  if (a.endsAt) row('Resolved at', a.endsAt);
  let samples = '';
  if (a.hasSamples) {
    const trs = a.samples
      .map((s) => `<tr><td>${s.time}</td><td><code>${s.file}</code></td><td>${s.code}</td><td>${s.message}</td></tr>`)
      .join('\n');
    samples = `<table border="1" cellpadding="4" cellspacing="0" style="border-collapse: collapse;">
<tr><th>Time</th><th>File</th><th>Code</th><th>Message</th></tr>
${trs}
</table>`;
  }
  return `<h3>[${a.status.toUpperCase()}] ${a.alertname}</h3>
<table cellpadding="2">${rows.join('')}</table>
${samples}`;
}
