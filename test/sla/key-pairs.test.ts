import { describe, expect, it } from 'vitest';
import { keyFromPairs, keyText } from '../../src/sla/occurrence.js';

/** `LABEL=VALUE` pairs as the API's and the page's `key=` parameters and the CLI's `--key` give them. */
describe('keyFromPairs', () => {
  it('makes a key of the pairs, a value holding `=` whole, and names the first pair without a label', () => {
    expect(keyFromPairs(['user=BANK1', 'mft_instance=PROD=1'])).toEqual({ key: { user: 'BANK1', mft_instance: 'PROD=1' } });
    expect(keyText((keyFromPairs(['user=BANK1', 'a=']) as { key: Record<string, string> }).key)).toBe('a=,user=BANK1');
    expect(keyFromPairs(['user=BANK1', 'BANK3', '=x'])).toEqual({ malformed: 'BANK3' });
    expect(keyFromPairs(['=x'])).toEqual({ malformed: '=x' });
    expect(keyFromPairs([])).toEqual({ key: {} });
  });
});
