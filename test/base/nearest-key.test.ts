import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { editDistance, nearestKey } from '../../src/base/nearest-key.js';
import { schemaKeysAt } from '../../src/base/schema-keys.js';

describe('nearestKey', () => {
  it('suggests the closest key for typos, swaps and case slips', () => {
    expect(nearestKey('listn', ['listen', 'external_url', 'web_config_file', 'allowed_hosts', 'max_silences', 'max_silence_size_bytes'])).toBe('listen');
    expect(nearestKey('recievers', ['receivers', 'route'])).toBe('receivers');
    expect(nearestKey('Interval', ['interval', 'delay'])).toBe('interval');
  });

  it('suggests nothing when no key is plausibly meant', () => {
    expect(nearestKey('frobnicate', ['sources', 'poll', 'state'])).toBeUndefined();
    expect(nearestKey('x', [])).toBeUndefined();
  });

  it('counts a transposition as one edit', () => {
    expect(editDistance('tiemout', 'timeout')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('schemaKeysAt', () => {
  it('reads valid keys from the schema through arrays, defaults, optionals and the recursive route', () => {
    expect(schemaKeysAt(configSchema, ['server'])).toEqual(['listen', 'external_url', 'web_config_file', 'allowed_hosts', 'max_silences', 'max_silence_size_bytes']);
    expect(schemaKeysAt(configSchema, ['sources', 0, 'tls'])).toEqual(['ca_file', 'insecure_skip_verify']);
    expect(schemaKeysAt(configSchema, ['receivers', 2, 'email', 'smtp'])).toContain('password');
    expect(schemaKeysAt(configSchema, ['route', 'routes', 0, 'routes', 1])).toContain('matchers');
    expect(schemaKeysAt(configSchema, [])).toContain('display_timezone');
    expect(schemaKeysAt(configSchema, ['nope'])).toEqual([]);
  });
});
