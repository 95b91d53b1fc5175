/**
 * Redaction of secrets inside strings (error messages, URLs) before they reach a log, an API answer or a
 * metric label. pino's `redact` handles object keys; this handles text.
 */

/** Keep scheme, host and port; hide credentials, path, query and fragment (webhook URLs carry their secret in the path). */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    const path = url.pathname && url.pathname !== '/' ? '/<redacted>' : '';
    return `${url.protocol}//${url.host}${path}`;
  } catch {
    return '<redacted-url>';
  }
}

/** Replace every occurrence of each known secret (and URL-encoded form) in `text`. Empty secrets are ignored. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) {
      out = out.split(form).join('<redacted>');
    }
  }
  return out;
}
