/**
 * Escaping of values that come from the monitored service (file names, messages, user names) for each
 * channel. Templates and default messages are trusted markup; only the values are escaped.
 */

/** One escaping function per channel, applied to every string value before a template sees it. */
export type Escaper = (value: string) => string;

/**
 * Slack mrkdwn: `&`, `<` and `>` are the only control characters Slack decodes, and `<...>` makes
 * links and mentions, so a file called `<!channel>` would ping everyone without this.
 */
export function escapeSlack(value: string): string {
  return stripControl(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** HTML text and attribute values: `<script>` stays text. */
export function escapeHtml(value: string): string {
  return stripControl(value).replace(/[&<>"']/g, (c) => HTML_ENTITIES[c] ?? c);
}

/**
 * A value placed in a mail header (subject): CR, LF and other control characters would start a new
 * header or break the message, so every run of them becomes one space.
 */
export function sanitizeHeader(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}

/**
 * Plain text (console, text mail): keep tabs and newlines out of values so one value cannot forge extra
 * lines of a message or terminal escape sequences.
 */
export function escapePlain(value: string): string {
  return sanitizeHeader(value);
}

function stripControl(value: string): string {
  // Newlines inside a value would break the line structure of a message: show them as spaces.
  return sanitizeHeader(value);
}

/**
 * Markdown (Microsoft Teams TextBlocks): the characters that make emphasis, code, links or raw tags are
 * backslash-escaped, so a value can neither format a message nor make a link. List and heading markers only
 * act at the start of a line, where a value never stands.
 */
export function escapeMarkdown(value: string): string {
  return stripControl(value).replace(/[\\`*_[\]<>~]/g, (c) => `\\${c}`);
}
