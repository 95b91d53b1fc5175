import { alreadyTold, transferText, type AlertContext, type TemplateContext } from '../../templates/template-context.js';

/**
 * A readable line per notification, then (for a lone alert with failed transfers) its window and up to 5 of
 * them, indented:
 * `[FIRING:1] TransferErrorBurst {mft_instance=PROD01, user=BANK1} 8 failed transfers for BANK1 in 10m (since …)`
 * `  window: 10m, from 2026-11-22 09:54:05 UTC to 2026-11-22 10:04:05 UTC`
 * `  - 2026-11-22 10:03:59 UTC  /in/BANK1/RET_1.RET  code 21  Timeout waiting for partner response`
 * Each time is said once: what the summary says (a deadline, a late arrival) is not repeated in parentheses.
 */
export function defaultConsoleLine(ctx: TemplateContext): string {
  const parts = [ctx.title];
  const summaries = [...new Set(ctx.alerts.map((a) => a.summary).filter((s) => s !== ''))];
  if (summaries.length > 0) parts.push(summaries.slice(0, 3).join('; ') + (summaries.length > 3 ? '; ...' : ''));
  const first = ctx.alerts[0];
  const lines: string[] = [];
  if (ctx.alerts.length === 1 && first) {
    if (first.isMissingFile) {
      if (!first.summary) parts.push(`(arrived ${first.count ?? 0} of ${first.expected ?? 1}${first.deadline ? ` by the deadline ${first.deadline}` : ''})`);
      else if (first.deadline && !alreadyTold(first, first.deadline)) parts.push(`(deadline ${first.deadline})`);
    } else if (first.count !== undefined && !first.summary) {
      parts.push(`(count=${first.count}${first.window ? ` window=${first.window}` : ''})`);
    }
    if (first.previousPhase) parts.push(`(${first.previousPhase})`);
    if (first.status === 'resolved' && first.arrivedAt && !alreadyTold(first, first.arrivedAt)) parts.push(`(arrived late at ${first.arrivedAt})`);
    if (first.ack) parts.push(`(acknowledged by ${first.ack})`);
    if (first.endsAt) parts.push(`(resolved at ${first.endsAt})`);
    else if (!first.sinceIsDeadline) parts.push(`(since ${first.startsAt})`);
    if (first.runbookUrl) parts.push(`runbook: ${first.runbookUrl}`);
    lines.push(...transferLines(first));
  } else if (ctx.alerts.length > 1) {
    parts.push(`(${ctx.firingCount} firing${ctx.resolvedCount > 0 ? `, ${ctx.resolvedCount} resolved` : ''})`);
  }
  return [parts.join(' '), ...lines].join('\n');
}

/** The window with its zone and the sample transfers of an alert that counts failures (error_burst and kin). */
function transferLines(a: AlertContext): string[] {
  if (a.isMissingFile) return [];
  const out: string[] = [];
  if (a.windowText && a.count !== undefined) out.push(`  window: ${a.windowText}`);
  for (const s of a.samples) out.push(`  - ${transferText(s)}`);
  return out;
}
