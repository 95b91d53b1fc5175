import { describe, expect, it } from 'vitest';
import { buildTransfersUrl, serviceEndpoints } from '../../src/source/transfers-query.js';
import { defaultRetryDelay } from '../../src/source/retry-delay.js';

describe('serviceEndpoints', () => {
  it.each([
    ['https://h.example/api', '/api'],
    ['https://h.example/api/', '/api'],
    ['https://h.example', ''],
    ['https://h.example/', ''],
  ])('puts the endpoints under the base path of %s', (base, prefix) => {
    const e = serviceEndpoints(base);
    expect(e.prefix).toBe(prefix);
    expect(e.token.pathname).toBe(`${prefix}/oauth/token`);
    expect(e.transfers.pathname).toBe(`${prefix}/reports/v2/transfers`);
  });
});

describe('buildTransfersUrl', () => {
  const e = serviceEndpoints('http://127.0.0.1:1/mft');

  it('encodes filters as the service expects them and leaves out empty ones', () => {
    const url = buildTransfersUrl(e, { start: 1, end: 2, limit: 1000, events: [5, 7], results: 0, user: 'A B', instance: '', tags: 'x&y' });
    expect(url.pathname).toBe('/mft/reports/v2/transfers');
    expect(url.searchParams.getAll('events')).toEqual(['5', '7']);
    expect(url.searchParams.get('user')).toBe('A B');
    expect(url.searchParams.get('tags')).toBe('x&y');
    expect(url.searchParams.has('instance')).toBe(false);
    expect(url.searchParams.get('results')).toBe('0');
  });

  it.each([
    { start: 1, end: 2, limit: 1001 },
    { start: 1, end: 2, limit: 0 },
    { start: 3, end: 2, limit: 10 },
    { start: 1.5, end: 2, limit: 10 },
  ])('refuses %j', (q) => {
    expect(() => buildTransfersUrl(e, q)).toThrow(/invalid transfers query/);
  });
});

describe('defaultRetryDelay', () => {
  it('honours Retry-After', () => {
    expect(defaultRetryDelay(3, 7000, () => 0.5)).toBe(7000);
  });

  it('grows exponentially with jitter in [base/2, base] and caps at 30 s', () => {
    expect(defaultRetryDelay(1, undefined, () => 0)).toBe(250);
    expect(defaultRetryDelay(1, undefined, () => 1)).toBe(500);
    expect(defaultRetryDelay(3, undefined, () => 1)).toBe(2000);
    expect(defaultRetryDelay(20, undefined, () => 1)).toBe(30_000);
    expect(defaultRetryDelay(20, undefined, () => 0)).toBe(15_000);
  });
});
