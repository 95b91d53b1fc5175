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

/**
 * Replace every occurrence of each known secret in `text`, in the forms a service may echo it in: as written,
 * URL-encoded (a path or query: `encodeURIComponent`; a form body: `+` for a space and `!'()*` escaped, as a token
 * endpoint echoing its request body shows it), JSON-escaped, and base64 (standard and URL-safe). Secrets shorter
 * than 4 characters are ignored.
 */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    for (const form of secretForms(secret)) {
      if (out.includes(form)) out = out.split(form).join('<redacted>');
    }
  }
  return out;
}

/** The ways a secret may be written in an answer or an error, longest first (a form inside another is found in it). */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)]);
  // Base64 of the secret alone; a shorter secret's base64 is too likely to occur by chance in other base64 text.
  if (secret.length >= 6) {
    const b64 = Buffer.from(secret, 'utf8').toString('base64');
    forms.add(b64.replace(/=+$/, ''));
    forms.add(Buffer.from(secret, 'utf8').toString('base64url'));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}
