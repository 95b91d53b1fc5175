import type { TemplateContext } from '../../templates/template-context.js';

/**
 * One readable line per notification:
 * `[FIRING:2] TransferErrorBurst {source=prod, user=BANK1} 7 failed transfers for BANK1 in 10m (count=7 window=10m)`.
 */
export function defaultConsoleLine(ctx: TemplateContext): string {
  const parts = [ctx.title];
  const summaries = [...new Set(ctx.alerts.map((a) => a.summary).filter((s) => s !== ''))];
  if (summaries.length > 0) parts.push(summaries.slice(0, 3).join('; ') + (summaries.length > 3 ? '; ...' : ''));
  const first = ctx.alerts[0];
  if (ctx.alerts.length === 1 && first) {
    if (first.isMissingFile) parts.push(`(arrived ${first.count ?? 0} of ${first.expected ?? 1} by ${first.deadline ? `the deadline ${first.deadline}` : 'the deadline'})`);
    else if (first.count !== undefined) parts.push(`(count=${first.count}${first.window ? ` window=${first.window}` : ''})`);
    if (first.status === 'resolved' && first.arrivedAt) parts.push(`(arrived late at ${first.arrivedAt})`);
    if (first.endsAt) parts.push(`(resolved at ${first.endsAt})`);
    else parts.push(`(since ${first.startsAt})`);
    if (first.runbookUrl) parts.push(`runbook: ${first.runbookUrl}`);
  } else if (ctx.alerts.length > 1) {
    parts.push(`(${ctx.firingCount} firing, ${ctx.resolvedCount} resolved)`);
  }
  return parts.join(' ');
}
