import { SourceError } from './source-error.js';
import { stringFilters, type ServiceEndpoints, type TransfersQuery } from './transfers-query.js';

/**
 * Turns the `next` of a page into the URL of the following page (contract section 8):
 * - resolved against the URL of the page that carried it;
 * - a `next` starting with `/reports/` keeps the base URL's path prefix (the service does not know it
 *   sits behind `/mft/api`);
 * - anything on another origin or another path is refused (`bad_next`): the token must only ever go to
 *   `base_url`'s origin, and a different path is not a page of this report;
 * - the query's own filters that `next` leaves out, or leaves empty, are added back, because the service
 *   is known to repeat only some of them (an empty `events=` would otherwise widen the query).
 */
export function resolveNextLink(next: string, pageUrl: URL, endpoints: ServiceEndpoints, query: TransfersQuery): URL {
  let url: URL;
  try {
    const target = endpoints.prefix !== '' && next.startsWith('/reports/') ? `${endpoints.prefix}${next}` : next;
    url = new URL(target, pageUrl);
  } catch (err) {
    throw new SourceError('bad_next', 'next page link is not a valid URI', { cause: err });
  }
  if (url.origin !== endpoints.transfers.origin) {
    throw new SourceError('bad_next', `next page link points to another origin (${url.protocol}//${url.host}); refused`);
  }
  if (url.pathname !== endpoints.transfers.pathname) {
    throw new SourceError('bad_next', `next page link points to another path (${url.pathname}); refused`);
  }
  url.hash = '';
  restoreFilters(url.searchParams, query);
  return url;
}

function isMissing(params: URLSearchParams, name: string): boolean {
  return params.getAll(name).every((v) => v === '');
}

function restoreFilters(params: URLSearchParams, query: TransfersQuery): void {
  const setIfMissing = (name: string, value: string): void => {
    if (isMissing(params, name)) params.set(name, value);
  };
  setIfMissing('start', String(query.start));
  setIfMissing('end', String(query.end));
  setIfMissing('limit', String(query.limit));
  if (query.results !== undefined) setIfMissing('results', String(query.results));
  for (const [name, value] of stringFilters(query)) setIfMissing(name, value);

  const events = query.events ?? [];
  if (events.length > 0) {
    const given = params.getAll('events').filter((v) => v !== '');
    params.delete('events');
    for (const code of given.length > 0 ? given : events.map(String)) params.append('events', code);
  }
}

/** A key that is equal for two URLs naming the same page, whatever the order of their parameters. */
export function pageKey(url: URL): string {
  const params = [...url.searchParams.entries()].sort(([a, av], [b, bv]) => (a === b ? cmp(av, bv) : cmp(a, b)));
  return `${url.origin}${url.pathname}?${new URLSearchParams(params).toString()}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
