import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Clock } from '../util/clock.js';
import { errorFields } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { ServiceRecord } from '../source/transfer.js';
import { faultsUpdateSchema, NO_FAULTS, type Faults } from './faults.js';
import type { HistoryEntry } from './generator.js';
import type { History, Cursor } from './history.js';
import { completeInjectedRecord } from './injected-record.js';
import { createRandom, hash32, hashUnit, type Random } from './random.js';
import { NEXT_QUIRKS, nextUri, parseReportQuery, queryKey, TRANSFERS_PATH, type ReportQuery } from './report-query.js';
import type { Scenario } from './scenarios.js';
import { SimulatorError } from './simulator-error.js';

export const TOKEN_PATH = '/oauth/token';
export const CONTROL_PREFIX = '/_sim/';
const DAY_MS = 86_400_000;
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Remembered page ends, so sequential paging resumes in O(page) instead of rescanning from the start. */
const CURSOR_CACHE_SIZE = 1024;

export interface SimulatorStats {
  tokenRequests: number;
  reportRequests: number;
  recordsServed: number;
}

export interface SimulatorServiceOptions {
  seed: number;
  scenario: Scenario;
  username: string;
  password: string;
  clock: Clock;
  history: History;
  /** Where a query without `start` begins. */
  historyStart: number;
  logger: Logger;
  /** Serve the test-only control API under /_sim/. */
  control: boolean;
  /** Path prefix of the service (like a gateway's); `next` does not carry it, as real gateways' services don't. */
  basePath: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body['message'] ?? body['error'] ?? status));
  }
}

/** The simulated service: token issuing, the report endpoint with its faults, and the control API. */
export class SimulatorService {
  readonly stats: SimulatorStats = { tokenRequests: 0, reportRequests: 0, recordsServed: 0 };
  private faults: Faults;
  private readonly tokens = new Set<string>();
  private readonly cursors = new Map<string, Cursor>();
  private readonly faultRandom: Random;
  private readonly quirkSeed: number;
  private readonly pending = new AbortController();

  constructor(private readonly o: SimulatorServiceOptions) {
    this.faults = { ...NO_FAULTS, ...o.scenario.faults };
    this.faultRandom = createRandom(hash32(o.seed, 0xfa017));
    this.quirkSeed = hash32(o.seed, 0x9e1c);
  }

  currentFaults(): Faults {
    return { ...this.faults };
  }

  /** Applies a partial update; `revokeTokens: true` revokes now and does not stay set. */
  setFaults(update: Partial<Faults>): Faults {
    const parsed = faultsUpdateSchema.parse(update);
    if (parsed.revokeTokens === true) this.tokens.clear();
    this.faults = { ...this.faults, ...parsed, revokeTokens: false };
    return this.currentFaults();
  }

  inject(records: readonly unknown[]): number {
    const now = this.o.clock.now();
    // Validate all before adding any, so a bad element leaves the history as it was.
    const complete = records.map((r) => completeInjectedRecord(r, now));
    this.o.history.inject(complete);
    // Offsets of earlier pages may have shifted.
    this.cursors.clear();
    return complete.length;
  }

  /** Ends pending delayed answers (on close). */
  abortPending(): void {
    this.pending.abort();
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) {
        send(res, err.status, err.body);
        return;
      }
      if (this.pending.signal.aborted) {
        res.destroy();
        return;
      }
      this.o.logger.error({ err: errorFields(err) }, 'simulator: unexpected error');
      send(res, 500, { error: 'internal_error', message: 'unexpected internal server error' });
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    const path = url.pathname;
    if (this.o.control && path.startsWith(CONTROL_PREFIX)) return this.control(req, res, path.slice(CONTROL_PREFIX.length));
    const base = this.o.basePath;
    if (base !== '' && !path.startsWith(`${base}/`)) throw new HttpError(404, { error: 'not_found', message: 'no such resource' });
    const local = path.slice(base.length);
    if (local !== TOKEN_PATH && local !== TRANSFERS_PATH) throw new HttpError(404, { error: 'not_found', message: 'no such resource' });
    if (this.faults.down) throw new HttpError(503, { error: 'unavailable', message: 'service unavailable' });
    if (local === TOKEN_PATH) {
      if (req.method !== 'POST') throw methodNotAllowed(res, 'POST');
      return this.token(req, res);
    }
    if (req.method !== 'GET') throw methodNotAllowed(res, 'GET');
    return this.report(req, res, url);
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.tokenRequests++;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    const body = await readBody(req);
    if (contentType !== 'application/x-www-form-urlencoded') {
      throw new HttpError(400, { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded' });
    }
    const form = new URLSearchParams(body.toString('utf8'));
    const grantType = form.get('grant_type');
    const username = form.get('username');
    const password = form.get('password');
    if (grantType === null || username === null || password === null) {
      throw new HttpError(400, { error: 'invalid_request', error_description: 'grant_type, username and password are required' });
    }
    if (grantType !== 'password') throw new HttpError(400, { error: 'unsupported_grant_type', error_description: 'only the password grant is supported' });
    if (username !== this.o.username || password !== this.o.password) {
      throw new HttpError(401, { error: 'invalid_grant', error_description: 'invalid operator credentials' });
    }
    const accessToken = randomBytes(24).toString('base64url');
    this.tokens.add(accessToken);
    send(res, 200, {
      access_token: accessToken,
      scope: JSON.stringify({
        reports: { instance: 1, user: 1, service: 1, schedule: 0 },
        transfers: { instance: 1, user: 1, service: 0, schedule: 0 },
      }),
      operator: username,
      rest_name: 'transfer-history-simulator',
      token_type: 'Bearer',
    });
  }

  private async report(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    this.stats.reportRequests++;
    const f = this.faults;
    // Drawn on every request whatever the rates, so the sequence of faults depends only on the seed.
    const roll500 = this.faultRandom.next();
    const rollDelay = this.faultRandom.next();
    const rollMalformed = this.faultRandom.next();
    if (f.tokenRevokeEvery > 0 && this.stats.reportRequests % f.tokenRevokeEvery === 0) this.tokens.clear();

    const auth = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!match?.[1] || !this.tokens.has(match[1]) || f.rejectTokens) {
      throw new HttpError(401, { error: 'unauthorized', message: 'access token invalid or absent' });
    }
    const now = this.o.clock.now();
    let q: ReportQuery;
    try {
      q = parseReportQuery(url.searchParams, { now, defaultStart: this.o.historyStart });
    } catch (err) {
      if (err instanceof SimulatorError) throw new HttpError(400, { error: 'bad_request', message: err.message });
      throw err;
    }
    if (roll500 < f.status500Rate || f.failWindows.some((w) => w.start <= q.end && w.end >= q.start)) {
      throw new HttpError(500, { error: 'internal_error', message: 'unexpected internal server error' });
    }
    if (f.delayMs > 0 && rollDelay < f.delayRate) await sleep(f.delayMs, undefined, { signal: this.pending.signal });

    if (f.hugePageRecords > 0) return streamHugePage(res, f.hugePageRecords, q.end, this.pending.signal);

    const key = queryKey(q);
    const cursor = q.index === 0 ? null : this.cursors.get(`${key}#${q.index}`);
    // Without a remembered cursor (another client, or an injection since), count from the start.
    const page = this.o.history.page(q, now, cursor ?? null, cursor === undefined ? q.index : 0, q.limit);
    const nextIndex = q.index + page.entries.length;
    if (page.more && page.last) this.remember(`${key}#${nextIndex}`, page.last);

    let data: Array<Record<string, unknown>> | null = page.entries.length === 0 ? null : page.entries.map((e) => this.serialise(e, now, f.recordQuirkRate));
    const failures = q.results !== 0;
    if (f.hugeFieldChars > 0 && failures) data = [...(data ?? []), hugeRecord(f.hugeFieldChars, q.end)];
    let next = '';
    if (f.endlessNext && failures) {
      next = nextUri(q, q.index + q.limit);
    } else if (page.more) {
      const h = hash32(this.quirkSeed, nextIndex, q.start, q.end);
      const quirk = hashUnit(h, 1) < f.nextQuirkRate ? NEXT_QUIRKS[h % NEXT_QUIRKS.length] : undefined;
      next = nextUri(q, nextIndex, quirk, `http://${req.headers.host ?? 'localhost'}${this.o.basePath}`);
    }
    this.stats.recordsServed += page.entries.length;
    const body = JSON.stringify({ data, next });
    if (rollMalformed < f.malformedRate) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body.slice(0, Math.max(1, Math.floor(body.length / 2))));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }

  private remember(key: string, cursor: Cursor): void {
    if (this.cursors.size >= CURSOR_CACHE_SIZE) {
      const oldest = this.cursors.keys().next();
      if (!oldest.done) this.cursors.delete(oldest.value);
    }
    this.cursors.set(key, cursor);
  }

  /** The record as the service sends it; some records (recordQuirkRate) spelled the sloppy ways real services do. */
  private serialise(e: HistoryEntry, now: number, quirkRate: number): Record<string, unknown> {
    const record: ServiceRecord = { ...e.record, DIAS: Math.max(0, Math.floor((now - e.time) / DAY_MS)) };
    const h = hash32(this.quirkSeed, e.time, e.seq);
    if (quirkRate <= 0 || hashUnit(h, 2) >= quirkRate) return { ...record };
    const variant = h % 3;
    const out: Record<string, unknown> = { ...record };
    if (variant !== 1) {
      for (const [k, v] of Object.entries(record)) if (typeof v === 'number') out[k] = String(v);
    }
    if (variant !== 0) out['DATAHORA'] = record.DATAHORA.replace(/Z$/, '');
    return out;
  }

  private async control(req: IncomingMessage, res: ServerResponse, action: string): Promise<void> {
    if (action === 'stats' && req.method === 'GET') return send(res, 200, { ...this.stats });
    if (action === 'faults' && req.method === 'GET') return send(res, 200, this.currentFaults());
    if ((action === 'records' || action === 'faults') && req.method === 'POST') {
      let input: unknown;
      try {
        input = JSON.parse((await readBody(req)).toString('utf8'));
      } catch {
        throw new HttpError(400, { error: 'bad_request', message: 'body must be JSON' });
      }
      if (action === 'faults') {
        const parsed = faultsUpdateSchema.safeParse(input);
        if (!parsed.success) throw new HttpError(400, { error: 'bad_request', message: z.prettifyError(parsed.error) });
        return send(res, 200, this.setFaults(parsed.data));
      }
      if (!Array.isArray(input)) throw new HttpError(400, { error: 'bad_request', message: 'body must be a JSON array of records' });
      try {
        return send(res, 200, { injected: this.inject(input) });
      } catch (err) {
        if (err instanceof SimulatorError) throw new HttpError(400, { error: 'bad_request', message: err.message });
        throw err;
      }
    }
    throw new HttpError(404, { error: 'not_found', message: 'control API: GET stats|faults, POST records|faults' });
  }
}

/** A failed transfer whose file name and message are `chars` characters long (the string is built once per size). */
let hugeText: { chars: number; text: string } | undefined;
function hugeRecord(chars: number, time: number): Record<string, unknown> {
  if (hugeText?.chars !== chars) hugeText = { chars, text: 'H'.repeat(chars) };
  return {
    DATAHORA: new Date(time).toISOString(),
    INSTANCE: 'PROD01',
    USUARIO: 'HOSTILE',
    EVENTO: 7,
    RESULTADO: 21,
    NOMEARQUIVO: `/in/HOSTILE/${hugeText.text}.RET`,
    MENSAGEM: hugeText.text,
    TAMARQUIVO: 1,
  };
}

/**
 * One page of `records` failed transfers whatever the limit, written as it is generated (the simulator never
 * holds it whole), until done or the client hangs up. Every record is distinct.
 */
async function streamHugePage(res: ServerResponse, records: number, time: number, signal: AbortSignal): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"data":[');
  const iso = new Date(time).toISOString();
  const CHUNK = 1_000;
  for (let i = 0; i < records && !res.destroyed && !signal.aborted; i += CHUNK) {
    let text = '';
    for (let k = i; k < Math.min(records, i + CHUNK); k++) {
      text += `${k === 0 ? '' : ','}{"DATAHORA":"${iso}","INSTANCE":"PROD01","USUARIO":"FLOOD","EVENTO":7,"RESULTADO":21,"NOMEARQUIVO":"/in/FLOOD/F${k}.RET","MENSAGEM":"flood","TAMARQUIVO":1}`;
    }
    if (!res.write(text)) await new Promise<void>((resolve) => {
      res.once('drain', resolve);
      res.once('close', resolve);
    });
  }
  if (!res.destroyed) res.end('],"next":""}');
}

function methodNotAllowed(res: ServerResponse, allow: string): HttpError {
  res.setHeader('allow', allow);
  return new HttpError(405, { error: 'method_not_allowed', message: `use ${allow}` });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, { error: 'too_large', message: 'request body too large' });
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}
