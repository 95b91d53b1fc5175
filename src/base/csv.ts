/**
 * RFC 4180: quote a field holding a comma, quote, CR or LF (or edge spaces), doubling inner quotes — and one holding a
 * semicolon or a tab: spreadsheets of locales whose separator is `;` (pt-BR, de, fr) or that split on tabs would
 * otherwise cut the field there, and a piece starting with `=` would run as a formula (`x;=cmd|' /C calc'!A0`).
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  // A text cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) is prefixed with a quote
  // (OWASP's CSV injection advice): file names and messages come from the monitored service. Numbers stay numbers.
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",;\t\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line (CRLF, as RFC 4180 says). */
export function csvLine(values: ReadonlyArray<string | number | null>): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
