import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { authenticatedUser } from '../security/http-security.js';
import { errorMessage } from '../../util/errors.js';
import type { AckApi } from '../daemon-api.js';
import { readBody } from '../read-body.js';
import { PAGE_STYLE } from './page-style.js';
import { html, type SafeHtml } from './safe-html.js';
import type { PageReply } from './status-page-handler.js';

/** The path of the confirmation page that a message's acknowledge link opens (contract 14). */
export const ACK_LINK_PATH = '/-/ack';

export interface AckLinkPageDeps {
  acks: AckApi;
  /** The alerts that fire now, with the ack of each (what the page lists and what can still be acknowledged). */
  firing(): Array<{ fingerprint: string; labels: Record<string, string>; annotations: Record<string, string>; ack?: { by: string; comment: string } | undefined }>;
}

function page(status: number, nonce: string, title: string, body: SafeHtml): PageReply {
  return {
    status,
    contentType: 'text/html; charset=utf-8',
    body: html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="same-origin"><title>${title}</title><style nonce="${nonce}">${PAGE_STYLE}</style></head>
<body><header><h1>${title}</h1></header><main>${body}</main><footer class="muted"><a href="/">transfer-watch status page</a></footer></body></html>
`.value,
    headers: {
      'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
      'X-Frame-Options': 'DENY',
      // The token is in the URL: no other site learns it from a referrer.
      'Referrer-Policy': 'same-origin',
    },
  };
}

/**
 * The page a mail's "Acknowledge…" link opens (contract 14). GET shows the alerts the link names and a form; only
 * the form's POST acknowledges, so a mail scanner that follows every link acknowledges nothing. The signed token is
 * the authority (the person may be on a phone, far from the loopback the other writes need); it is valid while one
 * of its alerts fires, and acknowledges only those.
 */
export class AckLinkPage {
  constructor(private readonly deps: AckLinkPageDeps) {}

  show(req: IncomingMessage): PageReply {
    const nonce = randomBytes(16).toString('base64');
    const token = new URL(req.url ?? '/', 'http://localhost').searchParams.get('t') ?? '';
    const named = this.deps.acks.verifyLink(token);
    if (!named) return page(404, nonce, 'Link not valid', html`<p>This acknowledge link was not made by this transfer-watch (or was cut short). Open the status page instead.</p>`);
    const wanted = new Set(named.fingerprints);
    const alerts = this.deps.firing().filter((a) => wanted.has(a.fingerprint));
    if (alerts.length === 0) return page(410, nonce, 'Nothing to acknowledge', html`<p>The alerts of this message no longer fire: they resolved.</p>`);
    const open = alerts.filter((a) => a.ack === undefined);
    const user = authenticatedUser(req);
    const list = html`<ul>${alerts.map(
      (a) => html`<li class="alert firing"><strong>${a.labels['alertname'] ?? ''}</strong> <span class="muted">${Object.entries(a.labels)
        .filter(([k]) => k !== 'alertname')
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}</span>${a.annotations['summary'] ? html`<p class="summary">${a.annotations['summary']}</p>` : ''}${a.ack ? html`<p class="acked">Acknowledged by ${a.ack.by}${a.ack.comment ? `: ${a.ack.comment}` : ''}</p>` : ''}</li>`,
    )}</ul>`;
    if (open.length === 0) return page(200, nonce, 'Already acknowledged', list);
    const form = html`<form method="post" action="${ACK_LINK_PATH}" class="ack-form">
<input type="hidden" name="t" value="${token}">
${user === undefined ? html`<label>Your name <input type="text" name="author" required maxlength="100" autocomplete="name"></label>` : html`<span class="muted">as ${user}</span>`}
<label>Note <input type="text" name="comment" maxlength="500" placeholder="on it, calling the bank…"></label>
<button type="submit">Acknowledge ${open.length === 1 ? 'this alert' : `these ${open.length} alerts`}</button>
</form><p class="muted">No repeats and no escalation for them while they fire; their resolution is still told.</p>`;
    return page(200, nonce, 'Acknowledge', html`${list}${form}`);
  }

  async acknowledge(req: IncomingMessage): Promise<PageReply> {
    const nonce = randomBytes(16).toString('base64');
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    const body = await readBody(req);
    if (type !== 'application/x-www-form-urlencoded') return page(415, nonce, 'Unsupported form', html`<p>The form must be posted as application/x-www-form-urlencoded.</p>`);
    const form = new URLSearchParams(body.toString('utf8'));
    try {
      const ack = await this.deps.acks.acknowledgeLink(form.get('t') ?? '', authenticatedUser(req) ?? form.get('author') ?? '', form.get('comment') ?? '');
      if (ack === 'invalid') return page(404, nonce, 'Link not valid', html`<p>This acknowledge link was not made by this transfer-watch.</p>`);
      if (ack === 'nothing') return page(410, nonce, 'Nothing to acknowledge', html`<p>The alerts of this message no longer fire, or someone acknowledged them already.</p>`);
      return page(200, nonce, 'Acknowledged', html`<p class="acked">${String(ack.fingerprints.length)} alert${ack.fingerprints.length === 1 ? '' : 's'} acknowledged by ${ack.by}. No repeats and no escalation while they fire; their resolution is still told.</p>`);
    } catch (err) {
      const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
      if (code === 'ack_invalid') return page(400, nonce, 'Not acknowledged', html`<p>${errorMessage(err)}</p>`);
      if (code === 'ack_no_alert') return page(410, nonce, 'Nothing to acknowledge', html`<p>The alerts of this message no longer fire.</p>`);
      throw err;
    }
  }
}
