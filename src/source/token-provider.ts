import { z } from 'zod';
import type { Logger } from '../util/logger.js';
import { SourceError } from './source-error.js';
import { bodyExcerpt, statusReason, type SourceHttp } from './source-http.js';

const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
});

export interface TokenProviderOptions {
  http: SourceHttp;
  tokenUrl: URL;
  username: string;
  password: string;
  logger: Logger;
}

/**
 * The operator token (OAuth 2.0 password grant, form-encoded). One token is cached and reused until the
 * report endpoint rejects it; concurrent callers share one in-flight request, so a revoked token causes
 * one re-authentication, not one per stream.
 */
export class TokenProvider {
  private token: string | undefined;
  private inflight: Promise<string> | undefined;

  constructor(private readonly opts: TokenProviderOptions) {}

  /** The cached token, or a new one. Throws SourceError. */
  get(signal?: AbortSignal): Promise<string> {
    if (this.token !== undefined) return Promise.resolve(this.token);
    if (!this.inflight) {
      this.inflight = this.fetch(signal).finally(() => {
        this.inflight = undefined;
      });
    }
    return this.inflight;
  }

  /**
   * Forget the token. With `stale`, only when it is still the cached one, so that two streams both
   * rejected with the same old token do not throw away the fresh token the first one already got.
   */
  invalidate(stale?: string): void {
    if (stale === undefined || this.token === stale) this.token = undefined;
  }

  private async fetch(signal?: AbortSignal): Promise<string> {
    const { http, tokenUrl, username, password, logger } = this.opts;
    // Transport failures are SourceErrors (counted by the HTTP layer); the caller's abort comes through as is.
    const response = await http.postForm(tokenUrl, { grant_type: 'password', username, password }, { accept: 'application/json' }, signal);
    if (response.statusCode < 200 || response.statusCode > 299) {
      const reason = statusReason(response.statusCode);
      logger.warn(
        { endpoint: 'token', status: response.statusCode, body: bodyExcerpt(response.text, [password]) },
        'token request refused by the transfer history service',
      );
      throw new SourceError(reason, `token request failed with HTTP ${response.statusCode}`, { statusCode: response.statusCode });
    }
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      throw new SourceError('invalid_response', 'token response is not JSON', { statusCode: response.statusCode });
    }
    const parsed = tokenResponseSchema.safeParse(json);
    if (!parsed.success) {
      throw new SourceError('invalid_response', 'token response has no access_token', { statusCode: response.statusCode });
    }
    logger.debug({ endpoint: 'token' }, 'obtained a new access token');
    this.token = parsed.data.access_token;
    return this.token;
  }
}
