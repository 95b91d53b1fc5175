import { TransferWatchError } from '../util/errors.js';

/**
 * Why talking to the transfer history service failed. These strings are stable: they become the
 * `reason` label of `transfer_watch_poll_errors_total` and appear in `/api/v1/status`.
 */
export const SOURCE_ERROR_REASONS = [
  'unauthorized',
  'bad_request',
  'server_error',
  'timeout',
  'network',
  'bad_next',
  'pagination_loop',
  'too_many_pages',
  'invalid_response',
  'response_too_large',
  'tls',
] as const;
export type SourceErrorReason = (typeof SOURCE_ERROR_REASONS)[number];

/**
 * A failed request or pagination against the service. `code` is `source_<reason>`; callers branch on
 * `reason`. Messages never carry the password, the token or a query string (they may name a path).
 */
export class SourceError extends TransferWatchError {
  readonly reason: SourceErrorReason;
  /** The HTTP status of the last response, when there was one. */
  readonly statusCode: number | undefined;

  constructor(reason: SourceErrorReason, message: string, options?: { cause?: unknown; statusCode?: number }) {
    super(`source_${reason}`, message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SourceError';
    this.reason = reason;
    this.statusCode = options?.statusCode;
  }
}

export function isSourceError(err: unknown): err is SourceError {
  return err instanceof SourceError;
}
