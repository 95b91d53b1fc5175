import type { AlertContext, TemplateContext } from './template-context.js';

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
  if (a.isMissingFile) {
    lines.push(`Arrived: ${a.count ?? 0} of ${a.expected ?? 1} expected${a.windowText ? ` in ${a.windowText}` : ''}`);
  } else if (a.count !== undefined) {
    lines.push(`Count: ${a.count} failed transfer${a.count === 1 ? '' : 's'}${a.windowText ? ` in ${a.windowText}` : ''}`);
  } else if (a.windowText) {
    lines.push(`Window: ${a.windowText}`);
  }
  if (a.deadline) lines.push(`Deadline: ${a.deadline}`);
  if (a.status === 'resolved' && a.arrivedAt) lines.push(`Resolved: the file arrived late, at ${a.arrivedAt}`);
  if (a.runbookUrl) lines.push(`Runbook: ${style.link(a.runbookUrl, 'runbook')}`);
  if (a.hasSamples) {
    // Samples are failures for most rules; duplicate_file and size_anomaly show successful transfers.
    const kind = a.samples.every((s) => s.code !== 0) ? 'Failed transfer' : 'Transfer';
    lines.push(a.samples.length === 1 ? `${kind}:` : `${kind}s (${a.samples.length} most recent):`);
    for (const s of a.samples) {
      lines.push(`  - ${s.time}  ${style.code(s.file)}  code ${s.code}${s.message ? `  ${s.message}` : ''}`);
    }
  }
  lines.push(`Active since: ${a.startsAt}`);
  if (a.endsAt) lines.push(`Resolved at: ${a.endsAt}`);
  return lines;
}

/** The multi-line plain-text message (text mail part). */
export function defaultText(ctx: TemplateContext): string {
  const out: string[] = [ctx.title, ''];
  for (const a of ctx.alerts) {
    out.push(...alertLines(a, plainStyle), '');
  }
  out.push(`Times are shown in ${ctx.timezone}.`);
  if (ctx.externalUrl) out.push(`transfer-watch: ${ctx.externalUrl}`);
  return out.join('\n') + '\n';
}
