/**
 * Lateness as a person reads it (contract 11c): `+40s`, `+45m`, `+1h35m`, `+23h`, `+3d` — on the page, the statement,
 * the CLI's tables, the scheduled reports and the alerts' messages. JSON and CSV keep exact seconds. Minutes below ten
 * hours (a partner argues over "+1h35m", not over "+23h10m"), whole hours below two days, then whole days.
 */
export function latenessText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `+${s}s`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `+${minutes}m`;
  if (minutes < 600) {
    const rest = minutes % 60;
    return `+${Math.floor(minutes / 60)}h${rest === 0 ? '' : `${rest}m`}`;
  }
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `+${hours}h` : `+${Math.round(hours / 24)}d`;
}

/** One unit, for a month grid's day cell: `+45m` under an hour, `+3h` under two days, then `+2d`. */
export function latenessMark(seconds: number): string {
  const minutes = Math.max(1, Math.round(seconds / 60));
  if (minutes < 60) return `+${minutes}m`;
  if (minutes < 48 * 60) return `+${Math.round(minutes / 60)}h`;
  return `+${Math.round(minutes / 1440)}d`;
}
