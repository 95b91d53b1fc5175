/**
 * HTML built with the `html` tag escapes every interpolated value unless it is already SafeHtml, so text from
 * the monitored service (file names, messages, user names) can only ever become text, never markup. There is no
 * way to insert a raw string except by going through `html` itself.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/**
 * Unicode's bidirectional controls: a file name with a right-to-left override displays reversed ("evil" shown as
 * "live"), which on a page of partners' files is a spoof. They are shown as what they are, `[U+202E]`.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Escape text for an HTML element body or a quoted attribute value; bidirectional controls made visible. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c).replace(BIDI_CONTROLS, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`);
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

/** Tagged template: literal parts are trusted markup, every `${value}` is escaped (arrays are joined). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/**
 * Text that may wrap only between its parts (after `_ . - = , / :`, and between the words of a CamelCase name), never
 * inside a word: a partner's `NY_Stmt` wraps as `NY_` / `Stmt`, never as `NY_St` / `mt` (contract 11c: a statement a
 * partner reads). The pieces are escaped as any other value.
 */
export function wrapBetweenWords(text: string): SafeHtml {
  return new SafeHtml(
    text
      .split(/(?<=[_.\-=,/:])|(?<=[a-z0-9])(?=[A-Z][a-z])/)
      .map(escapeHtml)
      .join('<wbr>'),
  );
}
