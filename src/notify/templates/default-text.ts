import { alreadyTold, transferText, type AlertContext, type TemplateContext } from './template-context.js';

/** Markup of a text channel: plain text has none, Slack mrkdwn uses `*bold*` and backticks. */
export interface TextStyle {
  bold(text: string): string;
  code(text: string): string;
  /** A link to an already escaped URL. */
  link(url: string, text: string): string;
}

export const plainStyle: TextStyle = { bold: (t) => t, code: (t) => t, link: (url) => url };

/**
 * The lines describing one alert, shared by the default text mail and Slack messages: what fired, its
 * labels and summary; for error_burst the count, the window with its zone and the sample failures;
 * for missing_file the deadline and, once resolved, when the file arrived late.
 */
export function alertLines(a: AlertContext, style: TextStyle): string[] {
  const lines: string[] = [];
  const labels = a.labelsText ? ` {${a.labelsText}}` : '';
  lines.push(`${style.bold(`[${a.status.toUpperCase()}] ${a.alertname}`)}${labels}`);
  if (a.summary) lines.push(`Summary: ${a.summary}`);
  if (a.description) lines.push(`Description: ${a.description}`);
  // Each time once: what the summary (or description) already says is not said again.
  if (a.isMissingFile) {
    // The window ends at the deadline: given as a length, so the deadline is not shown twice in two zones.
    lines.push(`Arrived: ${a.count ?? 0} of ${a.expected ?? 1} expected${a.window ? ` in the ${a.window} before the deadline` : ''}`);
  } else if (a.count !== undefined) {
    lines.push(`Count: ${a.count} failed transfer${a.count === 1 ? '' : 's'}${a.windowText ? ` in ${a.windowText}` : ''}`);
  } else if (a.windowText) {
    lines.push(`Window: ${a.windowText}`);
  }
  if (a.deadline && !alreadyTold(a, a.deadline)) lines.push(`Deadline: ${a.deadline}`);
  if (a.previousPhase) lines.push(`Before: ${a.previousPhase}`);
  if (a.status === 'resolved' && a.arrivedAt && !alreadyTold(a, a.arrivedAt)) lines.push(`Resolved: the file arrived late, at ${a.arrivedAt}`);
  if (a.ack) lines.push(`Acknowledged by ${a.ack}`);
  if (a.runbookUrl) lines.push(`Runbook: ${style.link(a.runbookUrl, 'runbook')}`);
  if (a.hasSamples) {
    // Samples are failures for most rules; duplicate_file and size_anomaly show successful transfers.
    const kind = a.samples.every((s) => s.code !== 0) ? 'Failed transfer' : 'Transfer';
    lines.push(a.samples.length === 1 ? `${kind}:` : `${kind}s (${a.samples.length} most recent):`);
    for (const s of a.samples) {
      lines.push(`  - ${transferText(s, style.code(s.file))}`);
    }
  }
  if (!a.sinceIsDeadline) lines.push(`Active since: ${a.startsAt}`);
  if (a.endsAt) lines.push(`Resolved at: ${a.endsAt}`);
  return lines;
}

/**
 * Alerts described one by one in a long message (mail); the rest are counted. A group can hold thousands of
 * alerts (the end of a backfill fired ~2,000 duplicate-file alerts at once), and a mail of all of them is
 * megabytes nobody reads; the title's count and the status page have them all.
 */
export const MAX_ALERTS_DESCRIBED = 50;

/** "…and N more alerts" when a message describes only the first MAX_ALERTS_DESCRIBED; '' otherwise. */
export function moreAlertsLine(ctx: TemplateContext): string {
  const more = ctx.alerts.length - MAX_ALERTS_DESCRIBED;
  return more > 0 ? `…and ${more} more alert${more === 1 ? '' : 's'} in this group (all of them are on the status page)` : '';
}

/** The multi-line plain-text message (text mail part). */
export function defaultText(ctx: TemplateContext): string {
  const out: string[] = [ctx.title, ''];
  for (const a of ctx.alerts.slice(0, MAX_ALERTS_DESCRIBED)) {
    out.push(...alertLines(a, plainStyle), '');
  }
  const more = moreAlertsLine(ctx);
  if (more) out.push(more, '');
  if (ctx.ackUrl) out.push(`Acknowledge (opens a page to confirm): ${ctx.ackUrl}`, '');
  out.push(`Times are shown in ${ctx.timezone}.`);
  if (ctx.externalUrl) out.push(`transfer-watch: ${ctx.externalUrl}`);
  return out.join('\n') + '\n';
}
