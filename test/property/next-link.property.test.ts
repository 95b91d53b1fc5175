import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveNextLink } from '../../src/source/next-link.js';
import { SourceError } from '../../src/source/source-error.js';
import { buildTransfersUrl, serviceEndpoints, type TransfersQuery } from '../../src/source/transfers-query.js';

const bases = ['https://mft.example.com', 'https://mft.example.com/mft/api', 'http://127.0.0.1:8443/api/'];
const query: TransfersQuery = { start: 1000, end: 2000, limit: 50, results: -1, events: [7], user: 'BANK1' };

/** Candidate `next` values: what services send, what attackers would, and noise. */
const nextLink = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string({ maxLength: 40 }),
  fc
    .tuple(
      fc.constantFrom('', '/', '//', '/reports/v2/', '/mft/api/reports/v2/', 'reports/v2/', '../', '/api/reports/v2/', 'https://mft.example.com/mft/api/reports/v2/', '//evil.example/', 'http://mft.example.com/', 'https://mft.example.com:444/', '\\\\evil.example/', '/\\evil.example/', 'https:evil.example/', 'javascript:', 'https://user:pw@mft.example.com/'),
      fc.constantFrom('transfers', 'transfers/', 'transfers/../transfers', 'transfers%2F..', 'other', '%2e%2e/transfers', ''),
      fc.constantFrom('', '?index=50', '?start=1&end=2&events=&limit=50&index=100', '#frag', '?index=1&results=0&user=OTHER'),
    )
    .map(([a, b, c]) => `${a}${b}${c}`),
);

describe('next link resolution (properties)', () => {
  it('never yields another origin or path: the token stays on base_url origin', () => {
    fc.assert(
      fc.property(fc.constantFrom(...bases), nextLink, (base, next) => {
        const endpoints = serviceEndpoints(base);
        const first = buildTransfersUrl(endpoints, query);
        let url: URL;
        try {
          url = resolveNextLink(next, first, endpoints, query);
        } catch (err) {
          expect(err).toBeInstanceOf(SourceError);
          expect((err as SourceError).reason).toBe('bad_next');
          return;
        }
        expect(url.origin).toBe(endpoints.base.origin);
        expect(url.pathname).toBe(endpoints.transfers.pathname);
        expect(url.username + url.password).toBe('');
        expect(url.hash).toBe('');
        // The query's own filters are always there.
        expect(url.searchParams.getAll('events').filter((e) => e !== '')).not.toHaveLength(0);
        expect(url.searchParams.get('results')).not.toBe('');
        expect(url.searchParams.get('user')).not.toBe('');
      }),
      { numRuns: 500 },
    );
  });

  it('any URL on another origin is refused', () => {
    fc.assert(
      fc.property(fc.constantFrom(...bases), fc.webUrl({ withQueryParameters: true }), (base, next) => {
        const endpoints = serviceEndpoints(base);
        fc.pre(new URL(next).origin !== endpoints.base.origin);
        expect(() => resolveNextLink(next, buildTransfersUrl(endpoints, query), endpoints, query)).toThrow(SourceError);
      }),
      { numRuns: 200 },
    );
  });
});
