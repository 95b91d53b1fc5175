import { got, RequestError } from 'got';
import type { Clock } from '../../../util/clock.js';
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

/**
 * POST a JSON body once. Retries are the dispatcher's job (it persists the outbox and honours
 * Retry-After), so the client never retries on its own. Throws a classified NotifyError.
 */
export async function postJson(url: string, body: unknown, options: PostJsonOptions): Promise<void> {
  let response;
  try {
    response = await got.post(url, {
      json: body,
      headers: {
        'user-agent': 'transfer-watch',
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
        ...options.headers,
      },
      timeout: { request: options.timeoutMs },
      retry: { limit: 0 },
      throwHttpErrors: false,
      followRedirect: false,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    const detail = err instanceof RequestError ? new Error(`${err.code}: ${err.message}`) : err;
    throw networkError(options.kind, url, detail, options.secrets);
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    throw httpStatusError(options.kind, url, response.statusCode, response.headers['retry-after'], options.clock);
  }
}
