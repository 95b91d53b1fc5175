/**
 * Text as both databases take it: PostgreSQL refuses NUL in text, and a label from the monitored service may hold
 * one. (JSON columns escape it themselves.)
 */
export function dbText(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value;
}
