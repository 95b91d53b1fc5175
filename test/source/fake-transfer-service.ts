import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * An adversarial fake of the transfer history service on a real node:http(s) server.
 * By default it behaves as the interface describes, except that its `next` links are the awkward kind
 * real deployments send: relative to the service root (`/reports/v2/...`, no base-path prefix), repeating
 * only start/end/limit with an empty `events=`, and dropping every other filter.
 * `intercept` injects faults per request; everything received is recorded for assertions.
 */

export interface RecordedRequest {
  n: number;
  kind: 'token' | 'transfers' | 'other';
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

export interface InterceptContext {
  request: RecordedRequest;
  res: ServerResponse;
  /** How many transfers requests came before this one. */
  transfersSeen: number;
  service: FakeTransferService;
}

export interface FakeServiceOptions {
  prefix?: string;
  username?: string;
  password?: string;
  records?: unknown[];
  tls?: { key: string; cert: string };
  /** Return true when the response was written here. */
  intercept?: (ctx: InterceptContext) => boolean | void;
  /** The `next` for the page that ends at `index` (exclusive). Default: the adversarial form above. */
  nextLink?: (index: number, params: URLSearchParams) => string;
  /** Ignore every filter, the time range included (a service that loses filters entirely). */
  ignoreFilters?: boolean;
}

export interface FakeTransferService {
  readonly baseUrl: string;
  readonly origin: string;
  readonly requests: RecordedRequest[];
  readonly transfersRequests: RecordedRequest[];
  readonly tokenRequests: RecordedRequest[];
  /** Tokens issued so far are no longer accepted. */
  revokeTokens(): void;
  close(): Promise<void>;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): true {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
  return true;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function recordTime(rec: unknown): number {
  if (typeof rec !== 'object' || rec === null || !('DATAHORA' in rec) || typeof rec.DATAHORA !== 'string') return Number.NaN;
  const text = rec.DATAHORA.replace(' ', 'T');
  return Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`);
}

function field(rec: unknown, name: string): unknown {
  return typeof rec === 'object' && rec !== null && name in rec ? (rec as Record<string, unknown>)[name] : undefined;
}

function matches(rec: unknown, params: URLSearchParams, ignoreFilters: boolean): boolean {
  if (ignoreFilters) return true;
  const time = recordTime(rec);
  const start = Number(params.get('start') ?? '0');
  const end = Number(params.get('end') ?? String(Number.MAX_SAFE_INTEGER));
  // Unreadable records are served anyway: the client must cope with them.
  if (!Number.isNaN(time) && (time < start || time > end)) return false;
  const results = params.get('results');
  const code = Number(field(rec, 'RESULTADO'));
  if (results === '0' && code !== 0) return false;
  if (results === '-1' && code === 0) return false;
  const events = params.getAll('events').filter((e) => e !== '');
  if (events.length > 0 && !events.includes(String(field(rec, 'EVENTO')))) return false;
  for (const [param, name] of [['instance', 'INSTANCE'], ['user', 'USUARIO']] as const) {
    const want = params.get(param);
    if (want && field(rec, name) !== want) return false;
  }
  const filename = params.get('filename');
  if (filename && !String(field(rec, 'NOMEARQUIVO')).includes(filename)) return false;
  return true;
}

function defaultNext(index: number, params: URLSearchParams): string {
  const next = new URLSearchParams();
  next.set('start', params.get('start') ?? '');
  next.set('end', params.get('end') ?? '');
  next.set('events', '');
  next.set('limit', params.get('limit') ?? '');
  next.set('index', String(index));
  return `/reports/v2/transfers?${next.toString()}`;
}

export async function startFakeService(options: FakeServiceOptions = {}): Promise<FakeTransferService> {
  const prefix = options.prefix ?? '';
  const username = options.username ?? 'operator';
  const password = options.password ?? 's3cret-pass';
  const records = options.records ?? [];
  const validTokens = new Set<string>();
  let issued = 0;
  const requests: RecordedRequest[] = [];
  const state = { transfersSeen: 0 };

  const service: FakeTransferService = {
    baseUrl: '',
    origin: '',
    requests,
    get transfersRequests() {
      return requests.filter((r) => r.kind === 'transfers');
    },
    get tokenRequests() {
      return requests.filter((r) => r.kind === 'token');
    },
    revokeTokens: () => validTokens.clear(),
    close: () => Promise.resolve(),
  };

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const body = await readBody(req);
    const kind =
      url.pathname === `${prefix}/oauth/token` ? 'token' : url.pathname === `${prefix}/reports/v2/transfers` ? 'transfers' : 'other';
    const request: RecordedRequest = {
      n: requests.length,
      kind,
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      body,
    };
    requests.push(request);
    const transfersSeen = state.transfersSeen;
    if (kind === 'transfers') state.transfersSeen += 1;
    if (options.intercept?.({ request, res, transfersSeen, service })) return;

    if (kind === 'token') {
      const form = new URLSearchParams(body);
      if (req.method !== 'POST' || !req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        json(res, 400, { error: 'invalid_request' });
      } else if (form.get('grant_type') !== 'password' || form.get('username') !== username || form.get('password') !== password) {
        json(res, 401, { error: 'invalid_grant' });
      } else {
        issued += 1;
        const token = `token-${issued}`;
        validTokens.add(token);
        json(res, 200, { access_token: token, token_type: 'Bearer', operator: username, rest_name: 'fake', scope: '{}' });
      }
      return;
    }
    if (kind !== 'transfers') {
      json(res, 404, { error: 'not found' });
      return;
    }
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!auth?.[1] || !validTokens.has(auth[1])) {
      json(res, 401, { error: 'unauthorized' });
      return;
    }
    const params = url.searchParams;
    const limit = Number(params.get('limit') ?? '100');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      json(res, 400, { error: 'limit must be 1..1000' });
      return;
    }
    const found = records.filter((r) => matches(r, params, options.ignoreFilters ?? false));
    if (found.length === 0) {
      json(res, 200, { data: null, next: '' });
      return;
    }
    const index = Number(params.get('index') ?? '0');
    const page = found.slice(index, index + limit);
    const end = index + page.length;
    const next = end < found.length ? (options.nextLink ?? defaultNext)(end, params) : '';
    json(res, 200, { data: page, next });
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handler(req, res).catch((err: unknown) => json(res, 500, { error: String(err) }));
  };
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  Object.assign(service, {
    baseUrl: `${origin}${prefix}`,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return service;
}

/** A transfer record in the service's wire form; override any field. */
export function wireRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    DATAHORA: '2024-05-01T12:00:00Z',
    INSTANCE: 'PROD1',
    USUARIO: 'BANK1',
    CONEXAO: 'TCP/IP 10.0.0.1',
    DATAARQUIVO: '20240501',
    EVENTO: 7,
    HORAARQUIVO: '115959',
    MAXTAMREG: 240,
    NUMREG: 10,
    MENSAGEM: 'Transfer failed',
    NOMEARQUIVO: '/in/EXTRATO_001.RET',
    TAGS: '',
    PROCID: 4242,
    REDE: 'SFTP',
    RESULTADO: 12,
    TAMARQUIVO: 2400,
    THREADID: 7,
    TIPOREC: 'FB',
    DIAS: 0,
    ...overrides,
  };
}

/** `n` records one second apart from `startIso`, each with a distinct file name. */
export function wireRecords(n: number, startIso: string, overrides: Record<string, unknown> = {}): Record<string, unknown>[] {
  const start = Date.parse(startIso);
  return Array.from({ length: n }, (_, i) =>
    wireRecord({ DATAHORA: new Date(start + i * 1000).toISOString(), NOMEARQUIVO: `/in/FILE_${i}.RET`, ...overrides }),
  );
}
