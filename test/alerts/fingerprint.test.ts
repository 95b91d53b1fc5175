import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/alerts/fingerprint.js';

describe('fingerprint', () => {
  it('stays what state files and the API already hold (the values of the first release)', () => {
    expect(fingerprint({ alertname: 'FailedTransfers', severity: 'critical', user: 'BANK1', mft_instance: 'PROD01' })).toBe('be8da97c0d1a364a');
    expect(fingerprint({ alertname: 'Ünïcode ✓', file: '/in/a b\\c"d' })).toBe('25234d61cee042e8');
  });

  it('depends on the label set, not on the order labels were added in', () => {
    expect(fingerprint({ b: '2', a: '1' })).toBe(fingerprint({ a: '1', b: '2' }));
    expect(fingerprint({ a: '1', b: '2' })).not.toBe(fingerprint({ a: '1', b: '3' }));
    expect(fingerprint({ a: '12' })).not.toBe(fingerprint({ a1: '2' }));
    expect(fingerprint({ a: '1' })).toMatch(/^[0-9a-f]{16}$/);
  });
});
