import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const CSRF_COOKIE = 'tw_csrf';

/**
 * Cross-site request forgery protection for the page's form posts (the JSON API keeps its own contract):
 * a random per-process token, put in a hidden field of every form and in a SameSite=Strict cookie, must come
 * back in both (double submit); a cross-site page can read neither. On top, an `Origin` or `Referer` header,
 * when the browser sends one, must name this host, and `Sec-Fetch-Site: cross-site` is refused.
 */
export class CsrfGuard {
  readonly token: string;

  constructor(token: string = randomBytes(32).toString('base64url')) {
    this.token = token;
  }

  /** The Set-Cookie value sent with the page. HttpOnly: only the form field needs to be readable. */
  cookie(): string {
    return `${CSRF_COOKIE}=${this.token}; Path=/; SameSite=Strict; HttpOnly`;
  }

  /** Why the request is refused, or undefined when it passes. */
  reject(req: IncomingMessage, formToken: string | undefined): string | undefined {
    const host = req.headers.host;
    if (req.headers['sec-fetch-site'] === 'cross-site') return 'cross-site request';
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!sameHost(origin, host)) return 'Origin does not match this host';
    } else {
      const referer = req.headers.referer;
      if (referer !== undefined && !sameHost(referer, host)) return 'Referer does not match this host';
    }
    if (!this.matches(cookieValue(req.headers.cookie, CSRF_COOKIE))) return 'missing or wrong CSRF cookie';
    if (!this.matches(formToken)) return 'missing or wrong CSRF token';
    return undefined;
  }

  private matches(candidate: string | undefined): boolean {
    if (candidate === undefined) return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

function sameHost(url: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(url).host === host.toLowerCase();
  } catch {
    return false; // includes Origin: null (sandboxed frames, some redirects)
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
