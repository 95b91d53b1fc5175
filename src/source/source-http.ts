import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import { Agent, errors, request } from 'undici';
import { parseRetryAfter } from '../base/retry-after.js';
import { systemClock } from '../util/clock.js';
import { errorMessage, errorMessageWithCode } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { redactSecrets } from '../util/redact.js';
import { SourceError, type SourceErrorReason } from './source-error.js';

export type Endpoint = 'token' | 'transfers';

export interface SourceHttpOptions {
  endpoint: Endpoint;
  /** Per attempt (headers and body together), ms; 0 = none. */
  timeoutMs: number;
  /** Attempts per request, the first included (source.retries); 0 behaves like 1. */
  attempts: number;
  retryDelay: (attempt: number, retryAfterMs?: number) => number;
  /** Custom CA bundle (PEM) and whether to skip certificate verification. */
  tls: { ca?: Buffer; insecureSkipVerify: boolean };
  logger: Logger;
  /** Called once per attempt with the HTTP status or a failure kind ('timeout', 'network', 'tls', 'too_large'). */
  onAttempt: (statusCode: string) => void;
  /**
   * Parses a 2xx body; throwing makes the request be tried again like a 5xx (a truncated or garbled body from a
   * proxy is as transient as a 502). Without it bodies are returned as text.
   */
  parseBody?: (text: string) => unknown;
  /** Largest response body read (bytes); a larger one is cut off as `response_too_large`. */
  maxResponseBytes: number;
}

/** The final answer to a request: every status is returned, the caller decides what a 400 or a 401 means. */
export interface SourceResponse {
  statusCode: number;
  /** A 2xx body as `parseBody` read it; otherwise the body's text. */
  body: unknown;
  /** The body's text, for a log excerpt; '' for a parsed 2xx body (a page is only read through `body`). */
  text: string;
}

type Method = 'GET' | 'POST';

/** What one attempt brought back. */
interface Answer {
  statusCode: number;
  text: string;
  /** Why a compressed body did not decompress (its text is then ''). */
  undecodable: string | undefined;
  retryAfter: string | string[] | undefined;
}

/** Another try is due, and why (for the log line). */
interface Retry {
  retryReason: string;
  retryAfterMs?: number;
}

/**
 * Compressed answers are asked for, as got asked for them: a page of JSON is a tenth of its size gzipped, which
 * matters to a service across a WAN. Decoded with node:zlib (undici's own decompress interceptor is experimental,
 * and warned so on every start). zstd is left out: Node 20 has no zstd.
 */
const ACCEPT_ENCODING = 'gzip, deflate, br';

/** Transport failures worth another try: the connection, not the request, went wrong. */
const RETRY_ERROR_CODES = new Set([
  'ETIMEDOUT',
  'ECONNRESET',
  'EADDRINUSE',
  'ECONNREFUSED',
  'EPIPE',
  'ENOTFOUND',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** 429 and every 5xx are worth another try; other statuses will not change by asking again. */
function isRetryableStatus(statusCode: number): boolean {
  return statusCode === 429 || (statusCode >= 500 && statusCode <= 599);
}

/**
 * A Retry-After longer than this abandons the request instead of holding the poll cycle; the window is
 * fetched again next cycle anyway.
 */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The HTTP layer of one endpoint of one source, on undici: its own connection pool (with the source's CA and
 * verification), the body cut off past `maxResponseBytes` while it streams in, a deadline per attempt, and the
 * retries (timeouts, network errors, 429/5xx honouring Retry-After, a 2xx body `parseBody` refuses) with the
 * source's delay function. Redirects are never followed: a redirect could carry the Authorization header somewhere
 * else, and the service has no reason to send one.
 *
 * Why undici and not got, which the product card names and the notifiers still use: this layer is on the
 * backfill's path for every page, and got's own work per request (options merged, hooks, progress events) read
 * 0.85 of a bare `fetch` + `JSON.parse` over the same pages, undici's `request` 1.06–1.14 (docs/benchmarks.md,
 * seventeenth round). undici is the HTTP client Node's own `fetch` is built on.
 *
 * The attempts are a loop here rather than undici's RetryAgent: an attempt is bounded as a whole (headers and body;
 * undici's timers only bound each phase's silence, so a body dripped a byte at a time would hold a poll forever),
 * and a 2xx body that does not parse is retried, which only the reader of the body can tell.
 */
export class SourceHttp {
  private readonly agent: Agent;

  constructor(private readonly opts: SourceHttpOptions) {
    this.agent = new Agent({
      connect: {
        rejectUnauthorized: !opts.tls.insecureSkipVerify,
        ...(opts.tls.ca ? { ca: opts.tls.ca } : {}),
        // `timeout: 0` in the config means no limit; undici reads a connect timeout of 0 the same way.
        timeout: opts.timeoutMs,
      },
      maxResponseSize: opts.maxResponseBytes,
      // The attempt's deadline bounds headers and body together; undici's per-phase timers are left out so that
      // `timeout: 0` really is no limit.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  get(url: URL, headers: Record<string, string>, signal?: AbortSignal): Promise<SourceResponse> {
    return this.send('GET', url, { ...headers, 'accept-encoding': ACCEPT_ENCODING }, undefined, signal);
  }

  /** A form-encoded POST (the token's password grant). */
  postForm(url: URL, form: Record<string, string>, headers: Record<string, string>, signal?: AbortSignal): Promise<SourceResponse> {
    const body = new URLSearchParams(form).toString();
    return this.send('POST', url, { ...headers, 'content-type': 'application/x-www-form-urlencoded', 'accept-encoding': ACCEPT_ENCODING }, body, signal);
  }

  /** Closes the pool's connections (idle ones end on their own after the keep-alive timeout anyway). */
  close(): Promise<void> {
    return this.agent.close();
  }

  /**
   * The answer after the retries. Throws SourceError when no usable answer came (the last attempt's failure), or
   * the caller's abort as is.
   */
  private async send(method: Method, url: URL, headers: Record<string, string>, body: string | undefined, signal?: AbortSignal): Promise<SourceResponse> {
    const attempts = Math.max(1, this.opts.attempts);
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.tryOnce(method, url, headers, body, attempt >= attempts, signal);
      if (!('retryReason' in outcome)) return outcome;
      this.opts.logger.warn({ endpoint: this.opts.endpoint, retry: attempt, reason: outcome.retryReason }, 'retrying request to the transfer history service');
      await sleep(this.opts.retryDelay(attempt, outcome.retryAfterMs), undefined, signal ? { signal } : undefined);
    }
  }

  /** One attempt, counted, and what it leads to: the answer, another try, or (thrown) the failure. */
  private async tryOnce(
    method: Method,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    last: boolean,
    signal?: AbortSignal,
  ): Promise<SourceResponse | Retry> {
    let answer: Answer;
    try {
      answer = await this.attempt(method, url, headers, body, signal);
    } catch (err) {
      if (isAbort(err, signal)) throw err;
      const failure = this.transportFailure(err);
      if (!failure.retryable || last) throw failure.error;
      return { retryReason: failure.kind };
    }
    const { statusCode, text } = answer;
    this.opts.onAttempt(String(statusCode));
    if (statusCode >= 200 && statusCode <= 299) {
      const { parseBody } = this.opts;
      try {
        if (answer.undecodable !== undefined) throw new Error(`the body does not decompress (${answer.undecodable})`);
        if (!parseBody) return { statusCode, body: text, text };
        return { statusCode, body: parseBody(text), text: '' };
      } catch (err) {
        if (!last) return { retryReason: 'invalid body' };
        throw new SourceError('invalid_response', `${this.opts.endpoint} response unusable after retries: ${errorMessage(err)}`, { statusCode });
      }
    }
    if (!isRetryableStatus(statusCode) || last) return { statusCode, body: text, text };
    const retryAfterMs = parseRetryAfter(answer.retryAfter, systemClock);
    if (retryAfterMs === undefined) return { retryReason: `http ${statusCode}` };
    // A service asking for a long pause gets it from the next poll cycle, not from this one.
    if (retryAfterMs > MAX_RETRY_AFTER_MS) return { statusCode, body: text, text };
    return { retryReason: `http ${statusCode}`, retryAfterMs };
  }

  /** One attempt, bounded as a whole by the timeout: the status, the body's text and Retry-After. */
  private async attempt(method: Method, url: URL, headers: Record<string, string>, body: string | undefined, signal?: AbortSignal): Promise<Answer> {
    signal?.throwIfAborted();
    // One controller per attempt, ended by the caller's signal or the deadline; the listener and the timer are
    // removed after it, so a long-lived caller signal does not collect one listener per page.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      this.opts.timeoutMs > 0
        ? setTimeout(() => controller.abort(new DOMException(`no answer within ${this.opts.timeoutMs} ms`, 'TimeoutError')), this.opts.timeoutMs)
        : undefined;
    try {
      const response = await request(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: controller.signal, dispatcher: this.agent });
      const decoders = decodersOf(response.headers['content-encoding']);
      let text: string;
      let undecodable: string | undefined;
      if (decoders === undefined) {
        text = await response.body.text();
      } else {
        try {
          text = await decompressed(response.body, decoders, this.opts.maxResponseBytes);
        } catch (err) {
          // The rest of the body is not wanted (its stream's own abort error is of no interest).
          if (!response.body.destroyed) response.body.on('error', () => undefined).destroy();
          // A body that does not decompress is as garbled as one that does not parse; the caller's abort, the
          // deadline and the cap are what they are.
          if (controller.signal.aborted || errorCode(err) === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') throw err;
          text = '';
          undecodable = errorMessage(err);
        }
      }
      return { statusCode: response.statusCode, text, undecodable, retryAfter: response.headers['retry-after'] };
    } finally {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The SourceError of an attempt that got no usable answer, counted, and whether trying again may help. The
   * transport error is not kept as `cause`: nothing of the request (the Authorization header, the password form)
   * may reach a log through it.
   */
  private transportFailure(err: unknown): { error: SourceError; kind: string; retryable: boolean } {
    const { endpoint, onAttempt, maxResponseBytes } = this.opts;
    const code = errorCode(err);
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      onAttempt('too_large');
      const error = new SourceError(
        'response_too_large',
        `${endpoint} response larger than ${maxResponseBytes} bytes; cut off (sources[].max_response_bytes)`,
      );
      return { error, kind: 'too_large', retryable: false };
    }
    const kind = failureKind(err);
    onAttempt(kind);
    const error = new SourceError(kind, `${endpoint} request failed (${kind}): ${errorMessageWithCode(err)}`);
    return { error, kind, retryable: kind === 'timeout' || RETRY_ERROR_CODES.has(code) };
  }
}

/** zlib's decoder for each encoding asked for in ACCEPT_ENCODING. */
const DECODERS: Record<string, () => Gunzip> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress as unknown as () => Gunzip,
};

/**
 * The decoders of a Content-Encoding, in the order they undo it (RFC 9110 §8.4: the codings are listed in the order
 * they were applied); undefined for none or identity. A coding not asked for makes the body unreadable, as one that
 * does not decompress.
 */
function decodersOf(header: string | string[] | undefined): Array<() => Gunzip> | undefined {
  const value = (Array.isArray(header) ? header.join(',') : (header ?? '')).toLowerCase();
  const codings = value.split(',').map((c) => c.trim()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return undefined;
  return codings.reverse().map((c) => DECODERS[c] ?? unknownCoding(c));
}

function unknownCoding(coding: string): () => Gunzip {
  return () => {
    throw new Error(`content-encoding ${coding} was not asked for`);
  };
}

/** A compressed body as text, cut off as soon as it inflates past `max` bytes (a small answer can inflate a lot). */
async function decompressed(body: NodeJS.ReadableStream, decoders: Array<() => Gunzip>, max: number): Promise<string> {
  const stages = decoders.map((make) => make());
  const last = stages[stages.length - 1] as Gunzip;
  const piped = pipeline([body, ...stages]);
  // A failure of any stage also ends `last` with it, which the loop reads; this only keeps it from going unhandled.
  piped.catch(() => undefined);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of last as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw new errors.ResponseExceededMaxSizeError();
      chunks.push(chunk);
    }
  } finally {
    // Cut off or failed: the pipeline's streams (the response's body among them) are ended, freeing the connection.
    for (const stage of stages) stage.destroy();
  }
  await piped;
  return Buffer.concat(chunks, size).toString('utf8');
}

function errorCode(err: unknown): string {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : '';
}

const TLS_ERROR = /CERT|SSL|TLS|EPROTO|ERR_OSSL/;
/** undici's own timers (connect, headers, body). */
const UNDICI_TIMEOUT = /^UND_ERR_\w+_TIMEOUT$/;

/** What kind of failure a request error without a response is. */
function failureKind(err: unknown): 'timeout' | 'tls' | 'network' {
  const code = errorCode(err);
  if ((err instanceof Error && err.name === 'TimeoutError') || code === 'ETIMEDOUT' || UNDICI_TIMEOUT.test(code)) return 'timeout';
  if (TLS_ERROR.test(code)) return 'tls';
  return 'network';
}

/** True when the caller's AbortSignal ended the request: that is a shutdown, not a source failure. */
function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return signal?.aborted === true || (err instanceof Error && err.name === 'AbortError');
}

/** The reason for a final non-2xx response. */
export function statusReason(statusCode: number): SourceErrorReason {
  if (statusCode === 401 || statusCode === 403) return 'unauthorized';
  if (statusCode === 429 || statusCode >= 500) return 'server_error';
  if (statusCode >= 400) return 'bad_request';
  return 'invalid_response';
}

/** The start of a response body, safe for a log line. */
export function bodyExcerpt(text: string, secrets: string[], max = 500): string {
  const safe = redactSecrets(text, secrets);
  return safe.length > max ? `${safe.slice(0, max)}… (${safe.length} chars)` : safe;
}
