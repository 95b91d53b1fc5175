import { describe, expect, it } from 'vitest';
import { pageKey, resolveNextLink } from '../../src/source/next-link.js';
import { SourceError } from '../../src/source/source-error.js';
import { buildTransfersUrl, serviceEndpoints, type TransfersQuery } from '../../src/source/transfers-query.js';

const endpoints = serviceEndpoints('https://mft.example.com/mft/api/');
const q: TransfersQuery = { start: 1000, end: 2000, limit: 50, results: -1, events: [5, 7], instance: 'PROD1', user: 'BANK1', filename: 'X', tags: 't' };
const first = buildTransfersUrl(endpoints, q);

function refused(next: string): string {
  try {
    resolveNextLink(next, first, endpoints, q);
  } catch (err) {
    expect(err).toBeInstanceOf(SourceError);
    return (err as SourceError).reason;
  }
  throw new Error('expected bad_next');
}

describe('resolveNextLink', () => {
  it('keeps the base path prefix for a next starting with /reports/ and restores every dropped filter', () => {
    const url = resolveNextLink('/reports/v2/transfers?start=1000&end=2000&events=&limit=50&index=50', first, endpoints, q);
    expect(url.origin + url.pathname).toBe('https://mft.example.com/mft/api/reports/v2/transfers');
    const p = url.searchParams;
    expect(p.getAll('events')).toEqual(['5', '7']);
    expect([p.get('results'), p.get('instance'), p.get('user'), p.get('filename'), p.get('tags'), p.get('index')]).toEqual([
      '-1', 'PROD1', 'BANK1', 'X', 't', '50',
    ]);
  });

  it('resolves a query-only next against the page URL', () => {
    const url = resolveNextLink('?index=100', first, endpoints, q);
    expect(url.pathname).toBe('/mft/api/reports/v2/transfers');
    expect(url.searchParams.get('start')).toBe('1000');
    expect(url.searchParams.get('limit')).toBe('50');
  });

  it('accepts a next that already carries the prefix, and keeps values the next did give', () => {
    const url = resolveNextLink('/mft/api/reports/v2/transfers?index=3&events=7&user=OTHER', first, endpoints, q);
    expect(url.searchParams.getAll('events')).toEqual(['7']);
    expect(url.searchParams.get('user')).toBe('OTHER');
  });

  it('does not add filters the query does not have', () => {
    const bare: TransfersQuery = { start: 1, end: 2, limit: 10 };
    const url = resolveNextLink('/reports/v2/transfers?index=3&events=', buildTransfersUrl(endpoints, bare), endpoints, bare);
    expect([...url.searchParams.keys()].sort()).toEqual(['end', 'events', 'index', 'limit', 'start']);
  });

  it.each([
    'https://evil.example.com/mft/api/reports/v2/transfers?index=2',
    'http://mft.example.com/mft/api/reports/v2/transfers?index=2',
    'https://mft.example.com:8443/mft/api/reports/v2/transfers?index=2',
    '//evil.example.com/reports/v2/transfers',
    '/reports/v3/transfers?index=2',
    '/mft/api/oauth/token',
    '../../admin?index=2',
    'https://[bad',
  ])('refuses %s', (next) => {
    expect(refused(next)).toBe('bad_next');
  });

  it('makes the same key for the same page whatever the parameter order', () => {
    expect(pageKey(new URL('https://h/p?b=2&a=1&a=0'))).toBe(pageKey(new URL('https://h/p?a=0&b=2&a=1')));
    expect(pageKey(new URL('https://h/p?index=1'))).not.toBe(pageKey(new URL('https://h/p?index=2')));
  });
});
