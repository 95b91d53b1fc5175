import { SimulatorError } from './simulator-error.js';

/** A validated `GET /reports/v2/transfers` query, with defaults resolved. */
export interface ReportQuery {
  /** Epoch ms, inclusive. */
  start: number;
  /** Epoch ms, inclusive. */
  end: number;
  /** EVENTO codes to keep; empty = all. */
  events: number[];
  limit: number;
  /** Position: how many matching records earlier pages returned. */
  index: number;
  results: 0 | -1 | undefined;
  instance: string | undefined;
  user: string | undefined;
  filename: string | undefined;
  /** Each tag must be in the record's comma-separated TAGS. */
  tags: string[];
}

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;
const INTEGER = /^-?\d+$/;

function bad(message: string): SimulatorError {
  return new SimulatorError('SIM_BAD_REQUEST', message);
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw bad(`parameter ${name} given more than once`);
  return values[0];
}

function integer(params: URLSearchParams, name: string): number | undefined {
  const raw = single(params, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!INTEGER.test(raw) || !Number.isSafeInteger(value)) throw bad(`parameter ${name} must be an integer, got ${JSON.stringify(raw)}`);
  return value;
}

function text(params: URLSearchParams, name: string): string | undefined {
  const raw = single(params, name);
  // An empty filter searches for nothing in particular.
  return raw === undefined || raw === '' ? undefined : raw;
}

/**
 * Parses the query string the way the service does: 400 (SIM_BAD_REQUEST) for non-integer numbers,
 * `limit` outside 1..1000, `results` other than 0/-1, `events` other than 5/7, `start` after `end`.
 * `start` defaults to `defaultStart`, `end` to `now`; an empty `events=` (as the service's own `next`
 * may carry) means all events.
 */
export function parseReportQuery(params: URLSearchParams, defaults: { now: number; defaultStart: number }): ReportQuery {
  const limit = integer(params, 'limit') ?? DEFAULT_LIMIT;
  if (limit < 1 || limit > MAX_LIMIT) throw bad(`limit must be between 1 and ${MAX_LIMIT}, got ${limit}`);
  const index = integer(params, 'index') ?? 0;
  if (index < 0) throw bad(`index must not be negative, got ${index}`);
  const end = integer(params, 'end') ?? defaults.now;
  const start = integer(params, 'start') ?? Math.min(defaults.defaultStart, end);
  if (start > end) throw bad(`start (${start}) is after end (${end})`);

  const resultsRaw = single(params, 'results');
  let results: 0 | -1 | undefined;
  if (resultsRaw === '0') results = 0;
  else if (resultsRaw === '-1') results = -1;
  else if (resultsRaw !== undefined) throw bad(`results must be 0 or -1, got ${JSON.stringify(resultsRaw)}`);

  const events: number[] = [];
  for (const raw of params.getAll('events')) {
    if (raw === '') continue;
    if (raw !== '5' && raw !== '7') throw bad(`events must be 5 or 7, got ${JSON.stringify(raw)}`);
    const code = Number(raw);
    if (!events.includes(code)) events.push(code);
  }
  events.sort((a, b) => a - b);

  const tags = params.getAll('tags').flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');

  return {
    start,
    end,
    events,
    limit,
    index,
    results,
    instance: text(params, 'instance'),
    user: text(params, 'user'),
    filename: text(params, 'filename'),
    tags,
  };
}

/** Identifies the result set a query pages through (everything but `index`). */
export function queryKey(q: ReportQuery): string {
  return JSON.stringify([q.start, q.end, q.events, q.limit, q.results ?? null, q.instance ?? null, q.user ?? null, q.filename ?? null, q.tags]);
}

export type NextQuirk = 'drop-filters' | 'empty-events' | 'absolute' | 'path-relative';
export const NEXT_QUIRKS: readonly NextQuirk[] = ['drop-filters', 'empty-events', 'absolute', 'path-relative'];

export const TRANSFERS_PATH = '/reports/v2/transfers';

/**
 * The `next` of a page: a relative URI of the same path repeating start, end, events, limit and the other
 * filters, plus `index`. With no events filter it carries an empty `events=`, as the interface allows.
 * A quirk reproduces what badly behaved services send (`absoluteBase` is origin + path prefix).
 */
export function nextUri(q: ReportQuery, index: number, quirk?: NextQuirk, absoluteBase = ''): string {
  const p = new URLSearchParams();
  p.append('start', String(q.start));
  p.append('end', String(q.end));
  if (q.events.length === 0 || quirk === 'empty-events') p.append('events', '');
  else for (const e of q.events) p.append('events', String(e));
  p.append('limit', String(q.limit));
  if (quirk !== 'drop-filters') {
    if (q.results !== undefined) p.append('results', String(q.results));
    if (q.instance !== undefined) p.append('instance', q.instance);
    if (q.user !== undefined) p.append('user', q.user);
    if (q.filename !== undefined) p.append('filename', q.filename);
    if (q.tags.length > 0) p.append('tags', q.tags.join(','));
  }
  p.append('index', String(index));
  const query = p.toString();
  switch (quirk) {
    case 'absolute':
      return `${absoluteBase}${TRANSFERS_PATH}?${query}`;
    case 'path-relative':
      return `transfers?${query}`;
    default:
      return `${TRANSFERS_PATH}?${query}`;
  }
}
