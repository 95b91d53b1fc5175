import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../util/logger.js';
import { BasicAuthenticator } from './basic-auth.js';
import { RequestGuard } from './request-guard.js';
import type { LoadedWebConfig } from './web-config.js';

/** Paths anyone may read without credentials even with authentication on (contract section 10): probes. */
const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/** Headers on every answer (a security review's list); a web config's `http_server_config.headers` are added. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

const users = new WeakMap<IncomingMessage, string>();

/** The user a request authenticated as (basic auth, or a verified client certificate's common name). */
export function authenticatedUser(req: IncomingMessage): string | undefined {
  return users.get(req);
}

export interface HttpSecurityOptions {
  webConfig: LoadedWebConfig | undefined;
  /** `server.allowed_hosts` and `server.external_url`'s host. */
  allowedHosts: readonly string[];
  logger: Logger;
  onAuthFailure?: () => void;
  /** Tests inject the peer's address (a non-loopback client without a network namespace). */
  peerAddress?: (req: IncomingMessage) => string | undefined;
}

/**
 * The daemon's HTTP security as one object the server asks per request, replaced whole when a reload brings a
 * new web config (a bad file keeps the last good one): who the caller is, whether it may write, which headers.
 */
export class HttpSecurity {
  readonly guard: RequestGuard;
  private readonly auth: BasicAuthenticator | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(readonly opts: HttpSecurityOptions) {
    const web = opts.webConfig;
    this.guard = new RequestGuard({
      allowedHosts: opts.allowedHosts,
      authenticated: web?.authenticates ?? false,
      ...(opts.peerAddress ? { peerAddress: opts.peerAddress } : {}),
    });
    const userList = web?.config.basic_auth_users ?? {};
    this.auth = Object.keys(userList).length > 0 ? new BasicAuthenticator(userList, opts.logger, { ...(opts.onAuthFailure ? { onFailure: opts.onAuthFailure } : {}) }) : undefined;
    this.headers = { ...SECURITY_HEADERS, ...(web?.config.http_server_config.headers ?? {}) };
  }

  get authenticates(): boolean {
    return this.opts.webConfig?.authenticates ?? false;
  }

  /** Authenticate a request for `path` (throws 401); records the user for `authenticatedUser`. */
  async authenticate(req: IncomingMessage, path: string): Promise<void> {
    const cert = clientCertName(req);
    if (cert) users.set(req, cert);
    if (!this.auth || OPEN_PATHS.has(path)) return;
    const peer = (this.opts.peerAddress ?? ((r: IncomingMessage) => r.socket.remoteAddress))(req) ?? 'unknown';
    users.set(req, await this.auth.authenticate(req, peer));
  }
}

/** The common name of a verified client certificate, if the connection presented one. */
function clientCertName(req: IncomingMessage): string | undefined {
  const socket = req.socket as IncomingMessage['socket'] & { authorized?: boolean; getPeerCertificate?: () => { subject?: { CN?: string } } };
  if (!socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const cn = socket.getPeerCertificate().subject?.CN;
  return typeof cn === 'string' && cn !== '' ? cn : undefined;
}
