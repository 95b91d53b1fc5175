import { ACK_LINK_PATH, AckLinkPage } from './status-page/ack-link-page.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TlsOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { TransferWatchError, errorFields } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { alertmanagerV2Routes, type V2Route } from './alertmanager-v2-routes.js';
import type { AckApi, DaemonApi, MetricsSource } from './daemon-api.js';
import { AckError } from '../notify/ack/ack.js';
import { HttpError } from './http-error.js';
import { readBody, readJsonBody, refuseLargeBodyOfRead } from './read-body.js';
import { readRunbook } from './runbook-pages.js';
import { encodeBody } from './response-encoding.js';
import { ConnectionLimiter } from './connection-limiter.js';
import { silenceHttpError } from './silence-errors.js';
import {
  alertEventJson,
  alertEventsCsv,
  attemptJson,
  attemptsCsv,
  encodeCursor,
  parseHistoryRequest,
  parseOncallRequest,
  silenceEventJson,
  silenceEventsCsv,
  type HistoryReader,
} from './history-routes.js';
import type { HistoryCursor } from '../history/history-store.js';
import { slaHandlers } from './sla-routes.js';
import { HeavyReadLimiter } from './heavy-read-limiter.js';
import { flowHandlers } from './flow-routes.js';
import { calendarYear, calendarYearOf } from '../sla/calendar-view.js';
import { authenticatedUser, HttpSecurity } from './security/http-security.js';
import type { WriteKind } from './security/request-guard.js';
import { StatusPageHandler } from './status-page/status-page-handler.js';
import { historyPage } from './status-page/history-page-handler.js';
import { slaPage } from './status-page/sla-page-handler.js';

export interface HttpServerOptions {
  /** `host:port` (`[v6]:port` too; an empty host listens on all interfaces); port 0 picks a free one. */
  listen: string;
  logger: Logger;
  metrics: MetricsSource;
  api: DaemonApi;
  /**
   * Authentication, who may write and by which Host, response headers (default: no web config: writes from
   * loopback only; the page by IP literal, localhost or the host name).
   */
  security?: HttpSecurity;
  /** Serve HTTPS with these options (a web config's tls_server_config); set at start, renewed on reload. */
  tls?: TlsOptions;
}

export interface RunningHttpServer {
  /** Base URL to reach the server (a wildcard listen address is shown as loopback). */
  url: string;
  port: number;
  /** Stop accepting, let requests in flight finish, close keep-alive sockets. */
  close(): Promise<void>;
  /** A reloaded web config: new users, headers and certificates (HTTP vs HTTPS itself needs a restart). */
  setSecurity(security: HttpSecurity): void;
}

/** Headers must arrive within this (checked every second, not Node's default 30 s: idle sockets lived 45 s). */
export const HEADERS_TIMEOUT_MS = 15_000;
/** A whole request (headers and body) must arrive within this. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** An idle keep-alive connection is closed after this. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;


const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

type Method = 'GET' | 'POST' | 'DELETE';

interface Reply {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

type Handler = (req: IncomingMessage, params: Record<string, string>) => Promise<Reply>;

interface Route {
  /** Path segments; a segment starting with `:` captures one non-empty segment. */
  segments: string[];
  handlers: Partial<Record<Method, Handler>>;
}

function json(status: number, value: unknown): Reply {
  return { status, contentType: JSON_TYPE, body: `${JSON.stringify(value)}\n` };
}

function text(status: number, body: string): Reply {
  return { status, contentType: TEXT_TYPE, body };
}

function errorReply(status: number, message: string, headers?: Record<string, string>, path?: string): Reply {
  // Alertmanager's API v2 answers errors with the message as a JSON string, which amtool prints; an object there
  // reaches its user as "json: cannot unmarshal object into Go value of type string".
  if (path?.startsWith('/api/v2/')) return { ...json(status, message), headers };
  return { ...json(status, { status: 'error', error: message }), headers };
}

function route(path: string, handlers: Partial<Record<Method, Handler>>): Route {
  return { segments: path.split('/').filter((s) => s !== ''), handlers };
}

/** Match a request path against a route; the captured parameters, or undefined. */
function matchRoute(r: Route, pathSegments: string[]): Record<string, string> | undefined {
  if (r.segments.length !== pathSegments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < r.segments.length; i++) {
    const want = r.segments[i] ?? '';
    const got = pathSegments[i] ?? '';
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      params[want.slice(1)] = got;
    } else if (want !== got) {
      return undefined;
    }
  }
  return params;
}

function isMethod(m: string): m is Method {
  return m === 'GET' || m === 'POST' || m === 'DELETE';
}

function allowedMethods(r: Route): string {
  const methods: string[] = Object.keys(r.handlers);
  if (methods.includes('GET')) methods.push('HEAD');
  return methods.join(', ');
}

const INDEX_LINKS: Array<[string, string]> = [
  ['/metrics', 'Prometheus metrics'],
  ['/api/v1/alerts', 'active alerts (JSON)'],
  ['/api/v1/status', 'source and stream status (JSON)'],
  ['/api/v1/silences', 'silences (JSON)'],
  ['/healthz', 'liveness'],
  ['/readyz', 'readiness'],
];

function indexPage(): string {
  const items = INDEX_LINKS.map(([href, what]) => `<li><a href="${href}">${href}</a> — ${what}</li>`).join('\n');
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>transfer-watch</title></head>\n<body><h1>transfer-watch</h1>\n<ul>\n${items}\n</ul></body></html>\n`;
}

/** The silence to create, with `createdBy` set to the authenticated user when there is one (nobody can pose as another). */
function withAuthor(input: unknown, req: IncomingMessage): unknown {
  const user = authenticatedUser(req);
  if (user === undefined || typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return { ...input, createdBy: user };
}

/** A scrape this soon after the last rendering is part of a burst, and waits a turn to share the next one. */
const SCRAPE_BURST_MS = 50;

function buildRoutes(opts: HttpServerOptions): Route[] {
  const { api, metrics, logger } = opts;
  // One line for the reads of the history database, whichever page or API asks (see HeavyReadLimiter).
  const heavy = new HeavyReadLimiter();
  // The daemon's clock (the demo's simulated morning), for every default range and "today" of the routes.
  const now = (): number => api.now?.() ?? Date.now();
  // A flood of scrapes shares one rendering instead of queueing one CPU-bound rendering per request; a scrape
  // that arrives after it finished gets a fresh one (never an outdated value). A lone scrape (the usual case: one
  // Prometheus every 15 s) is rendered at once: waiting a turn of the event loop for company let a page of the
  // poller and a batch of the rules run first, which during a backfill took a scrape's p99 from ~50 to ~100 ms.
  let rendering: Promise<string> | undefined;
  let lastRenderedAt = -Infinity;
  const renderMetrics = (): Promise<string> => {
    if (!rendering) {
      const burst = performance.now() - lastRenderedAt < SCRAPE_BURST_MS;
      const current = (async () => {
        // Under a burst, let the scrapes that arrive in this turn of the event loop join this rendering.
        if (burst) await new Promise((r) => setImmediate(r));
        try {
          return await metrics.metrics();
        } finally {
          lastRenderedAt = performance.now();
        }
      })();
      rendering = current;
      void current.finally(() => {
        if (rendering === current) rendering = undefined;
      }).catch(() => undefined);
    }
    return rendering;
  };
  const flows = flowHandlers({ flows: () => api.flows?.() ?? 'not configured', info: () => api.pageInfo?.() ?? { timezone: 'UTC', version: '' }, logger });
  const statusPage = api.statusPage ? new StatusPageHandler({ data: api.statusPage.bind(api), silences: api.pageSilences ?? api.silences, acks: api.acks }) : undefined;
  return [
    route('/', {
      GET: async (req) => (statusPage ? statusPage.page(req) : { status: 200, contentType: HTML_TYPE, body: indexPage() }),
    }),
    ...(statusPage
      ? [
          route('/-/ui/silences', { POST: (req) => statusPage.silence(req) }),
          route('/-/ui/silences/expire', { POST: (req) => statusPage.expire(req) }),
          route('/-/ui/acks', { POST: (req) => statusPage.ack(req) }),
        ]
      : []),
    route('/metrics', {
      GET: async () => ({ status: 200, contentType: metrics.contentType, body: await renderMetrics() }),
    }),
    route('/sla', {
      GET: (req) => heavy.run(req, () => slaPage(req, { sla: () => api.sla?.() ?? 'not configured', info: () => api.pageInfo?.() ?? { timezone: 'UTC', version: '' }, now })),
    }),
    route('/flows', {
      GET: (req) => heavy.run(req, () => flows.page(req)),
    }),
    route('/api/v1/flows', { GET: (req) => heavy.run(req, () => flows.list(req)) }),
    route('/api/v1/flows/proposal', { GET: (req) => heavy.run(req, () => flows.proposal(req)) }),
    route('/history', {
      GET: (req) => heavy.run(req, () => historyPage(req, { history: api.history, info: () => api.pageInfo?.() ?? { timezone: 'UTC', version: '' }, now })),
    }),
    route('/healthz', { GET: async () => text(200, 'ok\n') }),
    route('/readyz', {
      GET: async () => {
        let ready = false;
        try {
          ready = api.ready();
        } catch (err) {
          logger.warn({ err: errorFields(err) }, 'readiness check failed');
        }
        return ready ? text(200, 'ready\n') : text(503, 'not ready\n');
      },
    }),
    route('/runbooks/:name', {
      GET: async (_req, params) => {
        const page = await readRunbook(params['name'] ?? '');
        if (page === undefined) throw new HttpError(404, 'runbook_not_found', 'no such runbook');
        return { status: 200, contentType: 'text/markdown; charset=utf-8', body: page };
      },
    }),
    route('/api/v1/alerts', { GET: async () => json(200, { alerts: api.alerts(), expected: api.expectedFiles?.() ?? [] }) }),
    route('/api/v1/status', { GET: async () => json(200, api.status()) }),
    route('/-/reload', {
      POST: async (req) => {
        await readBody(req); // bounded, and drained so the connection can be reused
        const result = await api.reload();
        if (result.ok) return json(200, { status: 'success' });
        return errorReply(500, result.error ?? 'reload failed');
      },
    }),
    route('/api/v1/silences', {
      GET: async () => json(200, { silences: api.silences.list() }),
      POST: async (req) => {
        const input = await readJsonBody(req);
        if (input === undefined) throw new HttpError(400, 'http_empty_body', 'request body is empty; expected a silence as JSON');
        try {
          const silence = await api.silences.create(withAuthor(input, req));
          const silenceID =
            typeof silence === 'object' && silence !== null && 'id' in silence && typeof silence.id === 'string'
              ? silence.id
              : undefined;
          return json(200, { status: 'success', silenceID, silence });
        } catch (err) {
          throw silenceHttpError(err);
        }
      },
    }),
    ...historyRoutes(api.history, logger, now, heavy),
    ...slaRoutes(api, heavy, now),
    ...calendarRoutes(api, now),
    ...(api.alertmanager ? alertmanagerV2Routes(api.alertmanager, api.silences).map(toRoute) : []),
    ...(api.acks ? ackRoutes(api.acks) : []),
    ...(api.acks ? ackLinkRoutes(api.acks, api) : []),
    route('/api/v1/silences/:id', {
      GET: async (_req, params) => {
        const silence = api.silences.get(params['id'] ?? '');
        if (silence === undefined) throw new HttpError(404, 'silence_not_found', 'silence not found');
        return json(200, silence);
      },
      DELETE: async (_req, params) => {
        const expired = await api.silences.expire(params['id'] ?? '');
        if (!expired) throw new HttpError(404, 'silence_not_found', 'silence not found');
        return json(200, { status: 'success' });
      },
    }),
  ];
}

/** The confirmation page of a message's acknowledge link (contract 14): GET shows, POST acknowledges. */
function ackLinkRoutes(acks: AckApi, api: DaemonApi): Route[] {
  const linkPage = new AckLinkPage({
    acks,
    firing: () =>
      (api.alerts() as Array<{ fingerprint: string; labels: Record<string, string>; annotations: Record<string, string>; state: string; ack?: { by: string; comment: string } }>).filter((a) => a.state === 'firing'),
  });
  return [route(ACK_LINK_PATH, { GET: async (req) => linkPage.show(req), POST: (req) => linkPage.acknowledge(req) })];
}

/**
 * `/api/v1/acks` (contract 14): writes as silences' (§10: authenticated or loopback, never cross-site); the ack's
 * `by` is the authenticated user when there is one, as a silence's author is.
 */
function ackRoutes(acks: AckApi): Route[] {
  return [
    route('/api/v1/acks', {
      GET: async () => json(200, { acks: acks.list() }),
      POST: async (req) => {
        const input = await readJsonBody(req);
        if (input === undefined) throw new HttpError(400, 'http_empty_body', 'request body is empty; expected an acknowledgement as JSON');
        const user = authenticatedUser(req);
        const body = user !== undefined && typeof input === 'object' && input !== null && !Array.isArray(input) ? { ...input, by: user } : input;
        try {
          return json(201, await acks.create(body));
        } catch (err) {
          if (err instanceof AckError) throw new HttpError(err.code === 'ack_no_alert' ? 404 : 400, err.code, err.message);
          throw err;
        }
      },
    }),
    route('/api/v1/acks/:id', {
      GET: async (_req, params) => {
        const ack = acks.get(params['id'] ?? '');
        if (ack === undefined) throw new HttpError(404, 'ack_not_found', 'acknowledgement not found');
        return json(200, ack);
      },
      DELETE: async (req, params) => {
        const by = authenticatedUser(req) ?? new URL(req.url ?? '/', 'http://x').searchParams.get('by') ?? 'api';
        if (!(await acks.remove(params['id'] ?? '', by))) throw new HttpError(404, 'ack_not_found', 'acknowledgement not found');
        return json(200, { status: 'success' });
      },
    }),
  ];
}

/**
 * `/api/v1/history/alerts`, `/notifications` and `/silences` (contract section 12): pages newest first, `next`
 * to go on (also the `X-Next-Cursor` header of a CSV page), 503 while the history is disabled or its database
 * does not answer.
 */
function historyRoutes(history: HistoryReader | string | undefined, logger: Logger, now: () => number, heavy: HeavyReadLimiter): Route[] {
  const page = <T>(
    read: (h: HistoryReader, q: ReturnType<typeof parseHistoryRequest>['query']) => Promise<{ items: T[]; next: HistoryCursor | null }>,
    key: string,
    toJson: (item: T) => unknown,
    toCsv: (items: T[]) => string,
  ): Handler => {
    return async (req) => {
      if (history === undefined || typeof history === 'string') throw new HttpError(503, 'history_disabled', `the history is disabled: ${history ?? 'not configured'}`);
      const { query, format } = parseHistoryRequest(req, now());
      let result: { items: T[]; next: HistoryCursor | null };
      try {
        result = await heavy.run(req, () => read(history, query));
      } catch (err) {
        if (err instanceof HttpError) throw err;
        logger.warn({ err: errorFields(err), path: pathOf(req.url) }, 'history query failed');
        throw new HttpError(503, 'history_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
      }
      const next = encodeCursor(result.next);
      if (format === 'csv') {
        return { status: 200, contentType: 'text/csv; charset=utf-8', body: toCsv(result.items), headers: next ? { 'X-Next-Cursor': next } : {} };
      }
      return json(200, { [key]: result.items.map(toJson), next });
    };
  };
  return [
    route('/api/v1/history/alerts', { GET: page((h, q) => h.alertEvents(q), 'events', alertEventJson, alertEventsCsv) }),
    route('/api/v1/history/notifications', { GET: page((h, q) => h.attempts(q), 'attempts', attemptJson, attemptsCsv) }),
    route('/api/v1/history/silences', { GET: page((h, q) => h.silenceEvents(q), 'events', silenceEventJson, silenceEventsCsv) }),
    route('/api/v1/history/oncall', {
      GET: async (req) => {
        if (history === undefined || typeof history === 'string') throw new HttpError(503, 'history_disabled', `the history is disabled: ${history ?? 'not configured'}`);
        const q = parseOncallRequest(req, now());
        try {
          const report = await heavy.run(req, () => history.oncall(q));
          return json(200, { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), by: q.by, ...report });
        } catch (err) {
          if (err instanceof HttpError) throw err;
          logger.warn({ err: errorFields(err), path: pathOf(req.url) }, 'history query failed');
          throw new HttpError(503, 'history_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
        }
      },
    }),
  ];
}

/** `/api/v1/calendars` (the names) and `/api/v1/calendars/NAME?year=YYYY` (one calendar's year, as `calendar show`). */
function calendarRoutes(api: DaemonApi, now: () => number): Route[] {
  const names = (): string => Object.keys(api.calendars?.() ?? {}).sort().join(', ');
  return [
    route('/api/v1/calendars', { GET: async () => json(200, { calendars: Object.keys(api.calendars?.() ?? {}).sort() }) }),
    route('/api/v1/calendars/:name', {
      GET: async (req, params) => {
        const name = params['name'] ?? '';
        const calendars = api.calendars?.() ?? {};
        const config = Object.hasOwn(calendars, name) ? calendars[name] : undefined;
        if (!config) throw new HttpError(404, 'calendar_not_found', `no calendar "${name.slice(0, 100)}" (the config's calendars: ${names() || 'none'})`);
        const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
        for (const key of query.keys()) if (key !== 'year') throw new HttpError(400, 'calendar_bad_query', `unknown parameter "${key.slice(0, 100)}" (known: year)`);
        const year = calendarYearOf(query.get('year') ?? undefined, now());
        if (year === undefined) throw new HttpError(400, 'calendar_bad_query', 'year: must be a year such as 2026');
        return json(200, calendarYear(name, config, year));
      },
    }),
  ];
}

/** `/api/v1/sla/report`, `/occurrences` and `/excuses` (contract section 11). */
function slaRoutes(api: DaemonApi, heavy: HeavyReadLimiter, now: () => number): Route[] {
  const sla = slaHandlers(() => api.sla?.() ?? 'not configured', now);
  const csvOrJson = (r: { csv: string; next?: string | null } | { json: unknown } | { jsonText: string }): Reply =>
    'csv' in r
      ? { status: 200, contentType: 'text/csv; charset=utf-8', body: r.csv, headers: r.next ? { 'X-Next-Cursor': r.next } : {} }
      : 'jsonText' in r
        ? { status: 200, contentType: JSON_TYPE, body: `${r.jsonText}\n` }
        : json(200, r.json);
  return [
    route('/api/v1/sla/report', { GET: async (req) => csvOrJson(await heavy.run(req, () => sla.report(req))) }),
    route('/api/v1/sla/occurrences', { GET: async (req) => csvOrJson(await heavy.run(req, () => sla.occurrences(req))) }),
    route('/api/v1/history/sla', { GET: async (req) => json(200, await heavy.run(req, () => sla.events(req))) }),
    route('/api/v1/sla/excuses', {
      POST: async (req) => json(201, await sla.excuse(req)),
      DELETE: async (req) => json(200, await sla.withdraw(req)),
    }),
    route('/api/v1/sla/rejudge', { POST: async (req) => json(200, await sla.rejudge(req)) }),
    route('/api/v1/sla/backfill/retry', { POST: async () => json(200, await sla.retryBackfill()) }),
  ];
}

/** An Alertmanager v2 route: JSON answers; `undefined` is an empty 200 (Alertmanager's DELETE). */
function toRoute(r: V2Route): Route {
  const wrap =
    (handler: NonNullable<V2Route['get']>): Handler =>
    async (req, params) => {
      const value = await handler(req, params);
      return value === undefined ? { status: 200, contentType: JSON_TYPE, body: '' } : json(200, value);
    };
  return route(r.path, {
    ...(r.get ? { GET: wrap(r.get) } : {}),
    ...(r.post ? { POST: wrap(r.post) } : {}),
    ...(r.delete ? { DELETE: wrap(r.delete) } : {}),
  });
}

/** A write the state store (files or Redis) refused, or one fenced because this replica lost its lease. */
function isStateWriteError(err: unknown): err is TransferWatchError {
  return err instanceof TransferWatchError && (err.code === 'state_write' || err.code === 'ha_fenced');
}

/** What went wrong, without paths or upstream text. */
function stateWriteCause(err: TransferWatchError): string {
  return err.code === 'ha_fenced' ? 'this replica no longer holds the lease' : 'the state directory or Redis is not writable';
}

/** The path of a request URL, without the query (logs must not carry query strings). */
function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? '/', 'http://localhost').pathname;
  } catch {
    return '/';
  }
}

/** Parse `host:port` / `[v6]:port`; an empty host means all interfaces. */
function parseListen(listen: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]*)):(\d{1,5})$/.exec(listen);
  const port = Number(m?.[3]);
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw new TransferWatchError('http_bad_listen', `server.listen must be HOST:PORT, got "${listen}"`);
  }
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? undefined : host, port };
}

function displayHost(address: string): string {
  if (address === '0.0.0.0' || address === '') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

/**
 * The daemon's HTTP server (contract section 5): metrics, health, readiness, alerts, status, reload and
 * silences. Unknown paths are 404, a known path with another method 405 with `Allow`, bodies are bounded,
 * and every error is JSON `{status:"error", error}`.
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const { host, port } = parseListen(opts.listen);
  const routes = buildRoutes(opts);
  const logger = opts.logger;
  let closing = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let reply: Reply;
    const current = security;
    try {
      await current.authenticate(req, pathOf(req.url));
      reply = await dispatch(req);
    } catch (err) {
      if (err instanceof HttpError) {
        reply = errorReply(err.status, err.message, err.headers, pathOf(req.url));
      } else if (isStateWriteError(err)) {
        // A change (a silence) the state store refused: the client should know it did not stick and may retry.
        logger.error({ err: errorFields(err), method: req.method, path: pathOf(req.url) }, 'a change could not be saved');
        reply = errorReply(503, `not saved: the state store refused the write (${stateWriteCause(err)}); try again, and see the daemon's log`, { 'Retry-After': '5' }, pathOf(req.url));
      } else {
        // Unexpected errors may carry details (paths, upstream text) not meant for clients: log, answer generically.
        logger.error({ err, method: req.method, path: pathOf(req.url) }, 'http handler failed');
        reply = errorReply(500, 'internal error', undefined, pathOf(req.url));
      }
    }
    const { body, encoding } = encodeBody(req, Buffer.from(reply.body, 'utf8'), reply.contentType);
    const headers: Record<string, string | number> = {
      ...current.headers,
      'Content-Type': reply.contentType,
      'Content-Length': body.length,
      'Cache-Control': 'no-store',
      Vary: 'Accept-Encoding',
      ...(encoding ? { 'Content-Encoding': encoding } : {}),
      ...reply.headers,
    };
    // A body we refused is still on the socket; the connection cannot be reused.
    if (reply.status === 413 || closing) headers['Connection'] = 'close';
    res.writeHead(reply.status, headers);
    // Node leaves out the body itself for HEAD requests.
    res.end(body);
  }

  let security = opts.security ?? new HttpSecurity({ webConfig: undefined, allowedHosts: [], logger });

  /** Writes and the page that hands out the form token are checked before any handler runs. */
  function protect(req: IncomingMessage, method: string, segments: string[]): void {
    if (method === 'POST' || method === 'DELETE') {
      const path = `/${segments.join('/')}`;
      const kind: WriteKind = path === ACK_LINK_PATH ? 'signed' : path.startsWith('/-/ui/') ? 'form' : path === '/-/reload' || method === 'DELETE' ? 'empty' : 'json';
      security.guard.checkWrite(req, kind);
    } else if (segments.length === 0 || (segments.length === 1 && (segments[0] === 'history' || segments[0] === 'sla')) || `/${segments.join('/')}` === ACK_LINK_PATH) {
      // Pages people open in a browser: a rebinding host must not read them.
      security.guard.checkHost(req);
    }
  }

  async function dispatch(req: IncomingMessage): Promise<Reply> {
    if (req.method === 'GET' || req.method === 'HEAD') await refuseLargeBodyOfRead(req);
    let segments: string[];
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      segments = url.pathname
        .split('/')
        .filter((s) => s !== '')
        .map((s) => decodeURIComponent(s));
    } catch {
      throw new HttpError(400, 'http_bad_path', 'malformed request path');
    }
    for (const r of routes) {
      const params = matchRoute(r, segments);
      if (!params) continue;
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? '');
      const handler = isMethod(method) ? r.handlers[method] : undefined;
      if (!handler) {
        throw new HttpError(405, 'http_method_not_allowed', `method ${req.method ?? ''} not allowed`, {
          Allow: allowedMethods(r),
        });
      }
      protect(req, method, segments);
      return handler(req, params);
    }
    throw new HttpError(404, 'http_not_found', 'not found');
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: errorFields(err) }, 'http response failed');
      res.destroy();
    });
  };
  // Bounds slow clients (headers and body); nothing we serve takes long. Node checks these timeouts every
  // connectionsCheckingInterval (30 s by default), so the interval is what makes "15 s" mean 15 s.
  const timeouts = {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: 1_000,
  };
  // A TLS handshake that never comes is given up after 10 s (Node's default is 120 s).
  const server = opts.tls ? createHttpsServer({ handshakeTimeout: 10_000, ...opts.tls, ...timeouts }, onRequest) : createServer(timeouts, onRequest);
  // Floods of connections evict idle ones instead of locking everyone out (see ConnectionLimiter).
  new ConnectionLimiter({ firstRequestTimeoutMs: HEADERS_TIMEOUT_MS }).attach(server);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err: errorFields(err) }, 'http server error'));

  const address = server.address();
  if (address === null || typeof address === 'string') {
    throw new TransferWatchError('http_bad_listen', 'server is not listening on a TCP port');
  }
  const info: AddressInfo = address;
  const url = `${opts.tls ? 'https' : 'http'}://${displayHost(info.address)}:${info.port}`;
  logger.debug({ url, listen: opts.listen }, 'http server listening');

  return {
    url,
    port: info.port,
    setSecurity: (next) => {
      security = next;
      const tls = next.opts.webConfig?.tls;
      if (tls && 'setSecureContext' in server) server.setSecureContext(tls);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true;
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets would hold close() open: idle ones go now; busy ones answer with
        // `Connection: close` (see handle) and go after their reply.
        server.closeIdleConnections();
      }),
  };
}
