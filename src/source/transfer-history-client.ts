import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { SourceConfig } from './source-schema.js';
import { errorMessage } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { resolveNextLink, pageKey } from './next-link.js';
import { matchesQuery } from './query-match.js';
import { readRecord } from './record.js';
import { defaultRetryDelay } from './retry-delay.js';
import { SourceError } from './source-error.js';
import { bodyExcerpt, SourceHttp, statusReason, type Endpoint, type SourceResponse } from './source-http.js';
import { TokenProvider } from './token-provider.js';
import { EventLoopShare, TimeSlice } from '../util/time-slice.js';
import type { Transfer } from './transfer.js';
import { buildTransfersUrl, serviceEndpoints, type ServiceEndpoints, type TransfersQuery } from './transfers-query.js';

export type { TransfersQuery } from './transfers-query.js';

/** One page of the answer: the usable transfers and how many records were skipped and why. */
export interface TransferPage {
  transfers: Transfer[];
  /** Records that could not be read (each reported through `onInvalidRecord`). */
  invalid: number;
  /** A hash of each unreadable record's raw JSON: the poller counts a bad record once, however often it is fetched. */
  invalidIds: string[];
  /** Readable records outside the query's filters (the service ignored a filter). */
  dropped: number;
}

export interface ClientHooks {
  /** Once per HTTP attempt: the status code ('200', '401', ...) or 'timeout', 'network', 'tls'. */
  onRequest?(endpoint: Endpoint, statusCode: string): void;
  /** Once per record that could not be read. */
  onInvalidRecord?(reason: string): void;
}

export interface TransferHistoryClientOptions {
  source: SourceConfig;
  logger: Logger;
  hooks?: ClientHooks;
  /** Backoff before retry `attempt` (1-based); tests pass `() => 0`. Defaults to exponential with jitter. */
  retryDelay?: (attempt: number, retryAfterMs?: number) => number;
  /** The process's event loop, shared with its other long jobs (a page is read in slices); one of its own by default. */
  loop?: EventLoopShare;
}

interface InvalidLog {
  pagesLogged: number;
  unloggedRecords: number;
  unloggedPages: number;
}

interface Envelope {
  data: unknown[];
  next: string;
}

/** Largest token response read: a token is a few hundred bytes. */
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/** How many distinct invalid-record reasons one page's log line quotes. */
const INVALID_SAMPLES = 3;
/** Pages of one pagination whose invalid records get their own log line; the rest are summed up at the end. */
const INVALID_PAGES_LOGGED = 3;

/**
 * The client of the transfer history service (contract section 8), shared by the daemon and `query`.
 * One instance per configured source; it keeps that source's token.
 */
export class TransferHistoryClient {
  private readonly source: SourceConfig;
  private readonly logger: Logger;
  private readonly hooks: ClientHooks;
  private readonly loop: EventLoopShare;
  private readonly retryDelay: (attempt: number, retryAfterMs?: number) => number;
  private readonly endpoints: ServiceEndpoints;
  private ready: Promise<{ transfers: SourceHttp; tokens: TokenProvider }> | undefined;

  constructor(opts: TransferHistoryClientOptions) {
    this.source = opts.source;
    this.logger = opts.logger.child({ source: opts.source.name });
    this.hooks = opts.hooks ?? {};
    this.loop = opts.loop ?? new EventLoopShare();
    this.retryDelay = opts.retryDelay ?? ((attempt, retryAfterMs) => defaultRetryDelay(attempt, retryAfterMs));
    this.endpoints = serviceEndpoints(opts.source.base_url);
    if (opts.source.tls.insecure_skip_verify) {
      this.logger.warn('tls.insecure_skip_verify is set: the service certificate is not verified');
    }
  }

  /**
   * Every page of `query`, in order. Throws SourceError when a page cannot be fetched after the retries,
   * or when pagination goes wrong; the caller then abandons the whole window. An abort through `signal`
   * ends it with the abort error as is.
   */
  async *pages(query: TransfersQuery, signal?: AbortSignal): AsyncGenerator<TransferPage> {
    const firstUrl = buildTransfersUrl(this.endpoints, query);
    const { transfers, tokens } = await this.setUp();
    const invalidLog: InvalidLog = { pagesLogged: 0, unloggedRecords: 0, unloggedPages: 0 };
    try {
      yield* this.follow(transfers, tokens, firstUrl, query, invalidLog, signal);
    } finally {
      if (invalidLog.unloggedRecords > 0) {
        this.logger.warn(
          { invalid: invalidLog.unloggedRecords, pages: invalidLog.unloggedPages },
          'skipped more unreadable transfer records on further pages',
        );
      }
    }
  }

  private async *follow(
    transfers: SourceHttp,
    tokens: TokenProvider,
    firstUrl: URL,
    query: TransfersQuery,
    invalidLog: InvalidLog,
    signal?: AbortSignal,
  ): AsyncGenerator<TransferPage> {
    // A page is asked for when the consumer asks for it, not one ahead: asking ahead kept the event loop busy
    // through what were its idle moments, and a scrape during a backfill waited for them (p50 +3.6 ms, p99 +6 ms)
    // for 3–5% more records/s (docs/benchmarks-rounds.md, fourteenth round).
    let url = firstUrl;
    const followed = new Set([pageKey(url)]);
    // A service whose `next` never ends (a new index on every page) must not hold the poll forever, nor grow
    // memory: a window has at most max_records_per_window records, so at most this many pages.
    const maxPages = Math.ceil(this.source.max_records_per_window / Math.max(1, query.limit ?? 1000)) + 1;
    for (let pages = 1; ; pages++) {
      const { page, nextUrl } = await this.readNextPage(transfers, tokens, url, query, followed, invalidLog, signal);
      yield page;
      if (!nextUrl) return;
      if (pages >= maxPages) {
        throw new SourceError(
          'too_many_pages',
          `more than ${maxPages} pages (${this.source.max_records_per_window} records at limit ${query.limit ?? 1000}) in one window; the window is abandoned (sources[].max_records_per_window)`,
        );
      }
      url = nextUrl;
    }
  }

  /**
   * One page fetched and read. Its own frame, so that the page's parsed JSON is garbage as soon as the page is
   * read, not held by the generator while the consumer works through the page (the raw records then survived
   * into V8's old generation, page after page, and the heap grew with them).
   */
  private async readNextPage(
    transfers: SourceHttp,
    tokens: TokenProvider,
    url: URL,
    query: TransfersQuery,
    followed: Set<string>,
    invalidLog: InvalidLog,
    signal?: AbortSignal,
  ): Promise<{ page: TransferPage; nextUrl: URL | undefined }> {
    const envelope = await this.fetchPage(transfers, tokens, url, signal);
    // The service promises at most `limit` records a page; a page far past it is a broken (or hostile) service,
    // and reading it whole is what took the daemon to gigabytes. A few over are tolerated (off-by-one services).
    const limit = query.limit ?? 1000;
    if (envelope.data.length > limit * 2) {
      throw new SourceError('response_too_large', `a page of ${envelope.data.length} records, asked for at most ${limit}; the window is abandoned`);
    }
    let nextUrl: URL | undefined;
    if (envelope.next !== '') {
      nextUrl = resolveNextLink(envelope.next, url, this.endpoints, query);
      const key = pageKey(nextUrl);
      if (followed.has(key)) {
        throw new SourceError('pagination_loop', `the service sent a next page link already followed (after ${followed.size} pages)`);
      }
      followed.add(key);
    }
    return { page: await this.readPage(envelope.data, query, invalidLog), nextUrl };
  }

  private setUp(): Promise<{ transfers: SourceHttp; tokens: TokenProvider }> {
    this.ready ??= this.createHttp().catch((err: unknown) => {
      // A missing CA file may be fixed before the next cycle; do not cache the failure.
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async createHttp(): Promise<{ transfers: SourceHttp; tokens: TokenProvider }> {
    const { tls } = this.source;
    let ca: Buffer | undefined;
    if (tls.ca_file !== '') {
      try {
        ca = await readFile(tls.ca_file);
      } catch (err) {
        throw new SourceError('tls', `cannot read tls.ca_file ${tls.ca_file}: ${errorMessage(err)}`);
      }
    }
    const http = (endpoint: Endpoint): SourceHttp =>
      new SourceHttp({
        endpoint,
        timeoutMs: this.source.timeout,
        attempts: this.source.retries,
        retryDelay: this.retryDelay,
        tls: { ...(ca ? { ca } : {}), insecureSkipVerify: tls.insecure_skip_verify },
        logger: this.logger,
        onAttempt: (status) => this.hooks.onRequest?.(endpoint, status),
        // A token answer is a few hundred bytes; a page is bounded by the source's setting.
        maxResponseBytes: endpoint === 'token' ? MAX_TOKEN_RESPONSE_BYTES : this.source.max_response_bytes,
        ...(endpoint === 'transfers' ? { parseBody: parseEnvelope } : {}),
      });
    const tokens = new TokenProvider({
      http: http('token'),
      tokenUrl: this.endpoints.token,
      username: this.source.username,
      password: this.source.password,
      logger: this.logger,
    });
    return { transfers: http('transfers'), tokens };
  }

  /** The body of one page; a 401 gets one fresh token and one more try of the same page. */
  private async fetchPage(http: SourceHttp, tokens: TokenProvider, url: URL, signal?: AbortSignal): Promise<Envelope> {
    let token = await tokens.get(signal);
    let response = await this.get(http, url, token, signal);
    if (response.statusCode === 401) {
      this.logger.info('access token rejected; authenticating again');
      tokens.invalidate(token);
      token = await tokens.get(signal);
      response = await this.get(http, url, token, signal);
      if (response.statusCode === 401) {
        throw new SourceError('unauthorized', 'the service rejected a freshly issued token (HTTP 401)', { statusCode: 401 });
      }
    }
    if (response.statusCode >= 200 && response.statusCode <= 299) {
      if (!isEnvelope(response.body)) throw new SourceError('invalid_response', 'transfers response is not an envelope');
      return response.body;
    }
    const reason = statusReason(response.statusCode);
    if (reason === 'bad_request') {
      this.logger.warn(
        { endpoint: 'transfers', status: response.statusCode, path: url.pathname, body: bodyExcerpt(response.text, [this.source.password, token]) },
        'the service refused the transfers query',
      );
    }
    throw new SourceError(reason, `transfers request failed with HTTP ${response.statusCode}`, { statusCode: response.statusCode });
  }

  private async get(http: SourceHttp, url: URL, token: string, signal?: AbortSignal): Promise<SourceResponse> {
    // Defence in depth: resolveNextLink already refuses other origins, but the token must never leave.
    if (url.origin !== this.endpoints.base.origin) {
      throw new SourceError('bad_next', `refusing to send the token to another origin (${url.protocol}//${url.host})`);
    }
    return http.get(url, { authorization: `Bearer ${token}`, accept: 'application/json' }, signal);
  }

  /** A page's records read in slices of a few ms: a page of 1,000 held the event loop 10–40 ms in one piece. */
  private async readPage(data: unknown[], query: TransfersQuery, invalidLog: InvalidLog): Promise<TransferPage> {
    const page: TransferPage = { transfers: [], invalid: 0, invalidIds: [], dropped: 0 };
    const samples = new Set<string>();
    const slice = new TimeSlice(this.loop);
    for (let i = 0; i < data.length; i++) {
      if (slice.spent()) await slice.yield();
      const raw = data[i];
      // The parsed record is let go as soon as it is read: a young-generation collection copies what is still
      // reachable, and the page held every record already read until its end (over the same 194,000 records, the
      // scavenges took 30 ms instead of 110 ms).
      data[i] = undefined;
      const read = readRecord(raw, this.source.name);
      if (typeof read === 'string') {
        page.invalid += 1;
        page.invalidIds.push(invalidRecordId(raw));
        if (samples.size < INVALID_SAMPLES) samples.add(read);
        this.hooks.onInvalidRecord?.(read);
      } else if (matchesQuery(read, query)) {
        page.transfers.push(read);
      } else {
        page.dropped += 1;
      }
    }
    // One line per page however many records were bad, and only for the first few pages: a broken
    // page of 1000, or a window of 50 such pages, must not flood the log.
    if (page.invalid > 0) {
      if (invalidLog.pagesLogged < INVALID_PAGES_LOGGED) {
        invalidLog.pagesLogged += 1;
        this.logger.warn({ invalid: page.invalid, records: data.length, reasons: [...samples] }, 'skipped unreadable transfer records');
      } else {
        invalidLog.unloggedRecords += page.invalid;
        invalidLog.unloggedPages += 1;
      }
    }
    if (page.dropped > 0) {
      this.logger.debug({ dropped: page.dropped, records: data.length }, 'dropped records outside the query filters');
    }
    return page;
  }
}

/**
 * The identity of an unreadable record: a hash of its raw JSON, field by field, so that a record with a 10 MB
 * field is not copied into one more 10 MB string to be hashed.
 */
function invalidRecordId(raw: unknown): string {
  const h = createHash('sha256');
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      // `s` and `j` keep "1" and 1 apart, as JSON text did.
      h.update(key).update(typeof value === 'string' ? '\u0000s' : '\u0000j').update(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined')).update('\u0001');
    }
  } else {
    h.update(JSON.stringify(raw) ?? 'undefined');
  }
  return h.digest('hex').slice(0, 32);
}

function isEnvelope(value: unknown): value is Envelope {
  return typeof value === 'object' && value !== null && 'data' in value && Array.isArray(value.data) && 'next' in value && typeof value.next === 'string';
}

/**
 * The page envelope, parsed by the HTTP layer so that a 2xx body that is not a JSON object with `data` (array
 * or null) is retried like a 5xx: garbled and truncated bodies from proxies are transient in practice.
 * After the retries it is `invalid_response`.
 */
function parseEnvelope(body: string): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new SourceError('invalid_response', 'transfers response is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new SourceError('invalid_response', 'transfers response is not a JSON object');
  }
  const data: unknown = 'data' in json ? json.data : undefined;
  const next: unknown = 'next' in json ? json.next : undefined;
  if (data !== null && !Array.isArray(data)) {
    throw new SourceError('invalid_response', 'transfers response has no data array');
  }
  if (next !== undefined && next !== null && typeof next !== 'string') {
    throw new SourceError('invalid_response', 'transfers response has a non-string next');
  }
  return { data: data ?? [], next: typeof next === 'string' ? next.trim() : '' };
}
