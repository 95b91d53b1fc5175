import { request } from 'undici';
import type { Clock } from '../../../util/clock.js';
import { errorMessageWithCode } from '../../../util/errors.js';
import { httpStatusError, networkError } from './http-failure.js';

export interface PostJsonOptions {
  /** Integration name for messages (`webhook`, `alertmanager`). */
  kind: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  clock: Clock;
  /** Values to scrub from error messages besides the URL (tokens). */
  secrets?: string[];
  /**
   * Sent as `Idempotency-Key`: the same on every attempt of one notification (also after a restart), so a
   * receiver can drop the copy a crash in the middle of a send may cause.
   */
  idempotencyKey?: string | undefined;
}

/** What is read of an answer's body before the connection is let go: the body itself is never used. */
const MAX_DRAINED_BYTES = 64 * 1024;

/**
 * POST a JSON body once. Retries are the dispatcher's job (it persists the outbox and honours
 * Retry-After), so the client never retries on its own. Throws a classified NotifyError.
 *
 * Through undici, the HTTP client the daemon already polls the service with: the notifications' own client (got
 * and its seventeen packages) was loaded by every daemon at start for these single POSTs, and held about 8 MB of
 * RSS (docs/benchmarks-rounds.md, nineteenth round). undici follows no redirect unless asked (a 3xx is an answer, and not
 * a success), and `timeoutMs` bounds the whole exchange, headers and body, as got's `timeout.request` did.
 */
export async function postJson(url: string, body: unknown, options: PostJsonOptions): Promise<void> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let statusCode: number;
  let retryAfter: string | string[] | undefined;
  try {
    const response = await request(url, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: {
        'user-agent': 'transfer-watch',
        'content-type': 'application/json',
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
        ...options.headers,
      },
      signal,
    });
    statusCode = response.statusCode;
    retryAfter = response.headers['retry-after'];
    await response.body.dump({ limit: MAX_DRAINED_BYTES, signal });
  } catch (err) {
    throw networkError(options.kind, url, failureOf(err, deadline, options.timeoutMs), options.secrets);
  }
  if (statusCode < 200 || statusCode >= 300) {
    throw httpStatusError(options.kind, url, statusCode, retryAfter, options.clock);
  }
}

/** Why no answer came, in words: the deadline, or the error's code and message (`ECONNREFUSED: connect ...`). */
function failureOf(err: unknown, deadline: AbortSignal, timeoutMs: number): string {
  return deadline.aborted ? `timed out after ${timeoutMs} ms` : errorMessageWithCode(err);
}
