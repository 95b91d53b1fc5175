import { TransferWatchError } from '../util/errors.js';

/** One request stream against `GET /reports/v2/transfers`. Times are epoch ms, both ends inclusive. */
export interface TransfersQuery {
  start: number;
  end: number;
  /** 0 = successful transfers only, -1 = failed only; absent = both. */
  results?: 0 | -1;
  instance?: string;
  user?: string;
  filename?: string;
  /** Passed through as the `tags` parameter exactly as configured (its wire form is not documented). */
  tags?: string;
  /** EVENTO codes (5 transmission, 7 reception); absent or empty = all. */
  events?: number[];
  /** Page size, 1..1000. */
  limit: number;
}

export const MAX_PAGE_SIZE = 1000;

/** The service endpoints under a base URL that may carry a path prefix (`https://host/mft/api`). */
export interface ServiceEndpoints {
  /** The base URL without a trailing slash, query or fragment. */
  readonly base: URL;
  /** `{base}/oauth/token` */
  readonly token: URL;
  /** `{base}/reports/v2/transfers` */
  readonly transfers: URL;
  /** The path prefix of the base URL, '' when there is none (never ends with '/'). */
  readonly prefix: string;
}

export function serviceEndpoints(baseUrl: string): ServiceEndpoints {
  const base = new URL(baseUrl);
  base.search = '';
  base.hash = '';
  const prefix = base.pathname.replace(/\/+$/, '');
  base.pathname = prefix === '' ? '/' : prefix;
  const under = (path: string): URL => {
    const url = new URL(base.href);
    url.pathname = `${prefix}${path}`;
    return url;
  };
  return { base, token: under('/oauth/token'), transfers: under('/reports/v2/transfers'), prefix };
}

/** Throws on a query the service would answer with 400 anyway, so a caller bug is not blamed on the service. */
export function assertValidQuery(query: TransfersQuery): void {
  const problems: string[] = [];
  if (!Number.isSafeInteger(query.start) || !Number.isSafeInteger(query.end)) problems.push('start and end must be integer epoch ms');
  else if (query.start > query.end) problems.push('start is after end');
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE_SIZE) {
    problems.push(`limit must be 1..${MAX_PAGE_SIZE}`);
  }
  for (const code of query.events ?? []) {
    if (!Number.isSafeInteger(code)) problems.push(`event code ${String(code)} is not an integer`);
  }
  if (problems.length > 0) throw new TransferWatchError('invalid_query', `invalid transfers query: ${problems.join('; ')}`);
}

/**
 * The query's filter parameters as the service expects them: `events` repeated once per code,
 * `start`/`end` in ms. Empty strings are not sent (an empty filter would mean "match the empty name").
 */
export function queryParams(query: TransfersQuery): URLSearchParams {
  const params = new URLSearchParams();
  params.set('start', String(query.start));
  params.set('end', String(query.end));
  for (const code of query.events ?? []) params.append('events', String(code));
  params.set('limit', String(query.limit));
  if (query.results !== undefined) params.set('results', String(query.results));
  for (const [name, value] of stringFilters(query)) params.set(name, value);
  return params;
}

/** The string filters that are set (non-empty) on the query, with their wire names. */
export function stringFilters(query: TransfersQuery): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (name: string, value: string | undefined): void => {
    if (value !== undefined && value !== '') out.push([name, value]);
  };
  add('instance', query.instance);
  add('user', query.user);
  add('filename', query.filename);
  add('tags', query.tags);
  return out;
}

/** URL of the first page of `query`. */
export function buildTransfersUrl(endpoints: ServiceEndpoints, query: TransfersQuery): URL {
  assertValidQuery(query);
  const url = new URL(endpoints.transfers.href);
  url.search = queryParams(query).toString();
  return url;
}
