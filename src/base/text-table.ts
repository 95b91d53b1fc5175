/**
 * Columns aligned with two spaces between them, the last one not padded, trailing spaces trimmed: the tables the CLI
 * prints (`query`, `discover`). Control characters of a cell (names come from the monitored service) are shown as
 * visible escapes, so one row stays one line and no escape sequence reaches the terminal.
 */
export function textTable(header: readonly string[], rawRows: ReadonlyArray<readonly string[]>): string {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const visible = (c: string): string => c.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const rows = rawRows.map((r) => r.map(visible));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [header, ...rows].map(line).join('\n');
}
