import { describe, expect, it } from 'vitest';
import { retryDelay } from '../../src/base/backoff.js';

describe('retryDelay', () => {
  it('doubles from 1 s with jitter in [d/2, d] and caps at 5 min', () => {
    expect(retryDelay(1, () => 0)).toBe(500);
    expect(retryDelay(1, () => 0.999999)).toBe(1000);
    expect(retryDelay(2, () => 0)).toBe(1000);
    expect(retryDelay(4, () => 0.5)).toBe(6000);
    expect(retryDelay(30, () => 0.999999)).toBe(300_000);
  });

  it('never retries before Retry-After', () => {
    expect(retryDelay(1, () => 0, 120_000)).toBe(120_000);
    expect(retryDelay(10, () => 0.999999, 1_000)).toBe(300_000);
    expect(retryDelay(1, () => 0, Number.NaN)).toBe(500);
  });
});
