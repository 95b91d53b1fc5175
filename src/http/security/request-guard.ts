import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { HttpError } from '../http-error.js';

export interface RequestGuardOptions {
  /** Host names (no port) a browser may reach the daemon by, besides IP literals and localhost. */
  allowedHosts: readonly string[];
  /** A web config with authentication is in force: writes are allowed from anywhere (to authenticated users). */
  authenticated: boolean;
  /** The peer address of a request (tests inject one); default: the socket's remote address. */
  peerAddress?: (req: IncomingMessage) => string | undefined;
}

/**
 * How a write is sent: JSON API (must say `application/json`), the status page's form (CSRF-checked apart), or the
 * confirmation form of a message's acknowledge link (`signed`: its token is the authority, from any address).
 */
export type WriteKind = 'json' | 'form' | 'empty' | 'signed';

/**
 * The daemon's rules for who may do what over HTTP (contract section 10, docs/security.md):
 * - without a web config with authentication, a write (silence create/expire, reload, page forms) is refused
 *   with 403 unless it comes from loopback: anyone who reaches the port must not be able to blind on-call;
 * - a write never comes cross-site: a foreign `Origin`, or `Sec-Fetch-Site: cross-site`, is refused, so no web
 *   page an on-call engineer opens can post a silence (JSON writes must also say `application/json`, which a
 *   cross-site form or `text/plain` fetch cannot without a preflight we never grant);
 * - the status page and writes need a Host header that names this daemon (an IP literal, localhost, the host
 *   name, `server.external_url`'s host or `server.allowed_hosts`), which defeats DNS rebinding: a page on
 *   evil.example whose name now resolves to this daemon still says `Host: evil.example`.
 */
export class RequestGuard {
  private readonly allowed: Set<string>;

  constructor(private readonly opts: RequestGuardOptions) {
    this.allowed = new Set(['localhost', hostname().toLowerCase(), ...opts.allowedHosts.map((h) => h.toLowerCase())]);
  }

  /** A Host header naming something else than this daemon: 403 with how to allow it. */
  checkHost(req: IncomingMessage): void {
    const host = hostOf(req.headers.host);
    if (host === undefined) throw new HttpError(400, 'http_no_host', 'request without a Host header');
    if (isIP(host) !== 0 || this.allowed.has(host)) return;
    throw new HttpError(
      403,
      'http_host_not_allowed',
      `Host "${host}" is not a name of this daemon; add it to server.allowed_hosts (or set server.external_url) if it is`,
    );
  }

  checkWrite(req: IncomingMessage, kind: WriteKind): void {
    // The page's forms have their own CSRF check (token, cookie, Origin), which answers with a page.
    if (kind !== 'form') this.checkSameSite(req);
    this.checkHost(req);
    if (kind === 'json' && !isJson(req.headers['content-type'])) {
      throw new HttpError(415, 'http_not_json', 'the request body must be JSON, sent with Content-Type: application/json');
    }
    // A signed link's token acknowledges its alerts and nothing else, for whoever got the message (contract 14).
    if (kind === 'signed') return;
    if (!this.opts.authenticated) {
      const peer = (this.opts.peerAddress ?? ((r) => r.socket.remoteAddress))(req);
      if (!isLoopback(peer)) {
        throw new HttpError(
          403,
          'http_write_forbidden',
          'changes (silences, reload) are accepted only from this machine (loopback) unless server.web_config_file enables authentication; see docs/security.md',
        );
      }
    }
  }

  private checkSameSite(req: IncomingMessage): void {
    if (req.headers['sec-fetch-site'] === 'cross-site') throw new HttpError(403, 'http_cross_site', 'cross-site requests may not change anything');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const originHost = safeHost(origin);
      if (originHost === undefined || originHost !== req.headers.host?.toLowerCase()) {
        throw new HttpError(403, 'http_cross_site', `Origin ${origin} is not this daemon; cross-site requests may not change anything`);
      }
    }
  }
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.toLowerCase();
  return a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

function isJson(contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json' || (type?.startsWith('application/') === true && type.endsWith('+json'));
}

/** The host of a Host header, without port and brackets, lowercased. */
function hostOf(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  try {
    return new URL(`http://${header}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return undefined;
  }
}

function safeHost(url: string): string | undefined {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return undefined; // includes Origin: null (sandboxed frames, some redirects)
  }
}
