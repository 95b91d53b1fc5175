import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { authenticatedUser } from '../security/http-security.js';
import { parseDuration } from '../../base/duration.js';
import { errorMessage } from '../../util/errors.js';
import type { AckApi, SilenceApi } from '../daemon-api.js';
import { readBody } from '../read-body.js';
import { CsrfGuard } from './csrf-guard.js';
import { renderStatusPage } from './render-status-page.js';
import { html } from './safe-html.js';
import type { StatusPageData } from './status-page-data.js';

/** Same shape as the HTTP server's replies. */
export interface PageReply {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export interface StatusPageDeps {
  data(): StatusPageData;
  silences: SilenceApi;
  /** The acknowledgements the page's forms make (contract 14); absent: no form. */
  acks?: AckApi | undefined;
  /** Tests pin the token; by default a random one per process. */
  csrf?: CsrfGuard;
}

const HTML_TYPE = 'text/html; charset=utf-8';
/** Longest silence the page creates; longer ones are a job for `transfer-watch silence` with a reason. */
const MAX_SILENCE_MS = 30 * 86_400_000;

function securityHeaders(nonce: string): Record<string, string> {
  return {
    // Nothing runs or loads but our own nonce'd style and script; forms post only here; no framing (clickjacking).
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'X-Frame-Options': 'DENY',
    // Not no-referrer (the API's): under it a browser posts this page's forms with `Origin: null`, which the
    // cross-site guard refuses. same-origin still tells no other site where its link was clicked.
    'Referrer-Policy': 'same-origin',
  };
}

function messagePage(status: number, title: string, message: string): PageReply {
  const nonce = randomBytes(16).toString('base64');
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body><h1>${title}</h1><p>${message}</p><p><a href="/">Back to the status page</a></p></body></html>
`.value;
  return { status, contentType: HTML_TYPE, body, headers: securityHeaders(nonce) };
}

function redirect(notice: string): PageReply {
  return { status: 303, contentType: 'text/plain; charset=utf-8', body: 'See Other\n', headers: { Location: `/?notice=${notice}` } };
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | PageReply> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  const body = await readBody(req);
  if (type !== 'application/x-www-form-urlencoded') return messagePage(415, 'Unsupported form', 'The form must be posted as application/x-www-form-urlencoded.');
  return new URLSearchParams(body.toString('utf8'));
}

/**
 * The on-call status page (`GET /`) and its two actions (silence an alert, expire a silence). The actions go
 * through the same SilenceApi as `/api/v1/silences` and `transfer-watch silence`, behind the CSRF guard, and
 * answer with a 303 back to the page.
 */
export class StatusPageHandler {
  private readonly csrf: CsrfGuard;

  constructor(private readonly deps: StatusPageDeps) {
    this.csrf = deps.csrf ?? new CsrfGuard();
  }

  page(req: IncomingMessage): PageReply {
    const nonce = randomBytes(16).toString('base64');
    const notice = new URL(req.url ?? '/', 'http://localhost').searchParams.get('notice') ?? undefined;
    const user = authenticatedUser(req);
    const body = renderStatusPage(this.deps.data(), { csrfToken: this.csrf.token, nonce, notice, ...(user !== undefined ? { user } : {}) });
    return { status: 200, contentType: HTML_TYPE, body, headers: { ...securityHeaders(nonce), 'Set-Cookie': this.csrf.cookie() } };
  }

  async silence(req: IncomingMessage): Promise<PageReply> {
    const form = await readForm(req);
    if (!(form instanceof URLSearchParams)) return form;
    const refused = this.csrf.reject(req, form.get('csrf') ?? undefined);
    if (refused) return messagePage(403, 'Forbidden', `The request was refused (${refused}). Reload the status page and try again.`);

    const fingerprint = form.get('fingerprint') ?? '';
    const data = this.deps.data();
    const alert = data.alerts.find((a) => a.fingerprint === fingerprint);
    if (!alert) return messagePage(404, 'Alert not found', 'This alert is no longer active; nothing was silenced.');
    let durationMs: number;
    try {
      durationMs = parseDuration(form.get('duration') ?? '');
    } catch (err) {
      return messagePage(400, 'Bad duration', errorMessage(err));
    }
    if (durationMs <= 0 || durationMs > MAX_SILENCE_MS) return messagePage(400, 'Bad duration', 'The duration must be more than 0 and at most 30d.');
    try {
      // Exact matchers on the alert's whole label set: this alert, nothing broader.
      await this.deps.silences.create({
        matchers: Object.entries(alert.labels).map(([name, value]) => ({ name, value, isRegex: false, isEqual: true })),
        endsAt: new Date(data.now + durationMs).toISOString(),
        // The authenticated user, when there is one: nobody silences in someone else's name.
        createdBy: authenticatedUser(req) ?? form.get('author') ?? '',
        comment: form.get('comment') ?? '',
      });
    } catch (err) {
      if (isSilenceInvalid(err)) return messagePage(400, 'Silence not created', errorMessage(err));
      throw err;
    }
    return redirect('silenced');
  }

  /** Acknowledge the alerts the group's form names (by fingerprint), with its note (contract 14). */
  async ack(req: IncomingMessage): Promise<PageReply> {
    const form = await readForm(req);
    if (!(form instanceof URLSearchParams)) return form;
    const refused = this.csrf.reject(req, form.get('csrf') ?? undefined);
    if (refused) return messagePage(403, 'Forbidden', `The request was refused (${refused}). Reload the status page and try again.`);
    if (!this.deps.acks) return messagePage(404, 'Not available', 'Acknowledgements are not available here.');
    const fingerprints = form.getAll('fingerprint').slice(0, 10_000);
    try {
      await this.deps.acks.create({ fingerprints, by: authenticatedUser(req) ?? form.get('author') ?? '', comment: form.get('comment') ?? '' });
    } catch (err) {
      if (typeof err === 'object' && err !== null && 'code' in err && err.code === 'ack_no_alert') return messagePage(404, 'Nothing to acknowledge', 'These alerts no longer fire; nothing was acknowledged.');
      if (typeof err === 'object' && err !== null && 'code' in err && err.code === 'ack_invalid') return messagePage(400, 'Not acknowledged', errorMessage(err));
      throw err;
    }
    return redirect('acknowledged');
  }

  async expire(req: IncomingMessage): Promise<PageReply> {
    const form = await readForm(req);
    if (!(form instanceof URLSearchParams)) return form;
    const refused = this.csrf.reject(req, form.get('csrf') ?? undefined);
    if (refused) return messagePage(403, 'Forbidden', `The request was refused (${refused}). Reload the status page and try again.`);
    const expired = await this.deps.silences.expire(form.get('id') ?? '');
    if (!expired) return messagePage(404, 'Silence not found', 'No silence with this id exists.');
    return redirect('expired');
  }
}

function isSilenceInvalid(err: unknown): boolean {
  // Invalid, too large or one too many: the person is told why on a page; anything else is a 500.
  return typeof err === 'object' && err !== null && 'code' in err && (err.code === 'silence_invalid' || err.code === 'silence_too_large' || err.code === 'silence_limit');
}
