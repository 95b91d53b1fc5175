import { got, RequestError, type Got, type Response } from 'got';
import type { Logger } from '../util/logger.js';
import { redactSecrets } from '../util/redact.js';
import { SourceError, type SourceErrorReason } from './source-error.js';

export type Endpoint = 'token' | 'transfers';

export interface SourceHttpOptions {
  endpoint: Endpoint;
  /** Per request (each attempt), ms; 0 = none. */
  timeoutMs: number;
  /** Attempts per request, the first included (source.retries); 0 behaves like 1. */
  attempts: number;
  retryDelay: (attempt: number, retryAfterMs?: number) => number;
  /** Custom CA bundle (PEM) and whether to skip certificate verification. */
  tls: { ca?: Buffer; insecureSkipVerify: boolean };
  logger: Logger;
  /** Called once per attempt with the HTTP status or a failure kind ('timeout', 'network', 'tls'). */
  onAttempt: (statusCode: string) => void;
  /**
   * Parses a 2xx body; throwing makes got retry the request like a 5xx (a truncated or garbled body from
   * a proxy is as transient as a 502). Without it bodies are returned as text.
   */
  parseBody?: (text: string) => unknown;
  /** Largest response body read (bytes); a larger one is cut off as `response_too_large`. */
  maxResponseBytes: number;
}

const EMPTY_BODY = Buffer.alloc(0);

/** got's code for a 2xx body that `parseBody` refused. */
export const BODY_PARSE_FAILURE = 'ERR_BODY_PARSE_FAILURE';
const RETRY_ERROR_CODES = ['ETIMEDOUT', 'ECONNRESET', 'EADDRINUSE', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'ENETUNREACH', 'EAI_AGAIN'];

/** 429 and every 5xx are worth another try; other statuses will not change by asking again. */
const RETRY_STATUS_CODES = [429, ...Array.from({ length: 100 }, (_, i) => 500 + i)];

/**
 * A Retry-After longer than this abandons the request instead of holding the poll cycle; the window is
 * fetched again next cycle anyway.
 */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * A got instance for one endpoint of one source. got does the retrying (timeouts, network errors, 429/5xx,
 * honouring Retry-After) with our delay function; HTTP errors are returned, not thrown, so the caller
 * decides what a 400 or a 401 means. Redirects are never followed: a redirect could carry the
 * Authorization header somewhere else, and the service has no reason to send one.
 */
export function createSourceHttp(opts: SourceHttpOptions): Got {
  return got.extend({
    // got buffers a whole body before it parses it: a page of a million records (or one 10 MB field) from a
    // broken service took the daemon to gigabytes. The body is cut off as soon as it is known to be larger
    // (Content-Length, or while it streams in), so no answer holds more than maxResponseBytes in memory.
    handlers: [
      (options, next) => {
        const request = next(options);
        if (!('cancel' in request) || typeof request.cancel !== 'function') return request;
        const cancel = request.cancel.bind(request);
        request.on('downloadProgress', (progress) => {
          if (progress.transferred > opts.maxResponseBytes || (progress.total ?? 0) > opts.maxResponseBytes) cancel();
        });
        return request;
      },
    ],
    // `timeout: 0` in the config means no limit, as for got.
    ...(opts.timeoutMs > 0 ? { timeout: { request: opts.timeoutMs } } : {}),
    followRedirect: false,
    throwHttpErrors: false,
    ...(opts.parseBody ? { responseType: 'json' as const, parseJson: opts.parseBody } : { responseType: 'text' as const }),
    https: {
      rejectUnauthorized: !opts.tls.insecureSkipVerify,
      ...(opts.tls.ca ? { certificateAuthority: opts.tls.ca } : {}),
    },
    retry: {
      limit: Math.max(0, opts.attempts - 1),
      methods: ['GET', 'POST'],
      statusCodes: RETRY_STATUS_CODES,
      errorCodes: opts.parseBody ? [...RETRY_ERROR_CODES, BODY_PARSE_FAILURE] : RETRY_ERROR_CODES,
      maxRetryAfter: MAX_RETRY_AFTER_MS,
      // got computes 0 when its rules (limit, status, error code, Retry-After cap) say "do not retry".
      // A delay of 0 would also mean "do not retry" to got, hence the floor of 1 ms.
      calculateDelay: ({ attemptCount, retryAfter, computedValue }) =>
        computedValue === 0 ? 0 : Math.max(1, opts.retryDelay(attemptCount, retryAfter)),
    },
    hooks: {
      afterResponse: [
        (response) => {
          opts.onAttempt(String(response.statusCode));
          // A parsed 2xx page is only read through `body`: let go of its raw bytes (~0.6 MB a page) now, while
          // they are young garbage, instead of when the response object is collected, by then often promoted,
          // so a backfill piled up tens of MB of page buffers waiting for a full GC. Error bodies are kept for
          // the log excerpt.
          if (opts.parseBody && response.statusCode >= 200 && response.statusCode <= 299) response.rawBody = EMPTY_BODY;
          return response;
        },
      ],
      beforeRetry: [
        (error, retryCount) => {
          // Responses were counted in afterResponse, except a 2xx whose body did not parse (got skips the hook).
          if (!error.response) opts.onAttempt(failureKind(error));
          else if (error.code === BODY_PARSE_FAILURE) opts.onAttempt(String(error.response.statusCode));
          const reason = error.code === BODY_PARSE_FAILURE ? 'invalid body' : error.response ? `http ${error.response.statusCode}` : failureKind(error);
          opts.logger.warn(
            { endpoint: opts.endpoint, retry: retryCount, reason },
            'retrying request to the transfer history service',
          );
        },
      ],
    },
  });
}

const TLS_ERROR = /CERT|SSL|TLS|EPROTO|ERR_OSSL/;

/** What kind of failure a request error without a response is. */
export function failureKind(err: unknown): 'timeout' | 'tls' | 'network' {
  const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : '';
  if ((err instanceof Error && err.name === 'TimeoutError') || code === 'ETIMEDOUT') return 'timeout';
  if (TLS_ERROR.test(code)) return 'tls';
  return 'network';
}

/** True when the caller's AbortSignal ended the request: that is a shutdown, not a source failure. */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return signal?.aborted === true || (err instanceof Error && err.name === 'AbortError');
}

/**
 * Maps a request that never got a usable response to a SourceError. The got error is not kept as `cause`:
 * it holds the request options, which include the Authorization header and the password form.
 */
export function requestFailure(err: unknown, endpoint: Endpoint, onAttempt: (statusCode: string) => void, maxResponseBytes?: number): SourceError {
  // Our handler cancels a body over the cap (the caller's own abort goes through its signal, not cancel()).
  if (err instanceof Error && 'code' in err && err.code === 'ERR_CANCELED') {
    onAttempt('too_large');
    const limit = maxResponseBytes === undefined ? 'the limit' : `${maxResponseBytes} bytes`;
    return new SourceError('response_too_large', `${endpoint} response larger than ${limit}; cut off (sources[].max_response_bytes)`);
  }
  if (err instanceof RequestError && err.code === BODY_PARSE_FAILURE) {
    onAttempt(String(err.response?.statusCode ?? 'invalid'));
    const cause = err.cause instanceof Error ? err.cause.message : 'unreadable body';
    return new SourceError('invalid_response', `${endpoint} response unusable after retries: ${cause}`);
  }
  const kind = failureKind(err);
  onAttempt(kind);
  const detail = err instanceof RequestError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
  return new SourceError(kind, `${endpoint} request failed (${kind}): ${detail}`);
}

/** The reason for a final non-2xx response. */
export function statusReason(statusCode: number): SourceErrorReason {
  if (statusCode === 401 || statusCode === 403) return 'unauthorized';
  if (statusCode === 429 || statusCode >= 500) return 'server_error';
  if (statusCode >= 400) return 'bad_request';
  return 'invalid_response';
}

/** The start of a response body, safe for a log line. */
export function bodyExcerpt(response: Response<unknown>, secrets: string[], max = 500): string {
  const text = redactSecrets(response.rawBody.toString('utf8'), secrets);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
