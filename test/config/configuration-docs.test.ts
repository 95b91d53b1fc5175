import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load-config.js';
import { configSchema } from '../../src/config/schema.js';
import { schemaKeysAt } from '../../src/base/schema-keys.js';
import { INTEGRATION_KINDS } from '../../src/notify/integrations/registry.js';

const DOC = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** Every key the schema accepts anywhere, found by walking objects and list items (route recursion bounded). */
function allKeys(path: PropertyKey[] = [], depth = 0, out = new Set<string>()): Set<string> {
  if (depth > 6) return out;
  for (const key of schemaKeysAt(configSchema, path)) {
    out.add(key);
    allKeys([...path, key], depth + 1, out);
    allKeys([...path, key, 0], depth + 1, out);
  }
  return out;
}

describe('docs/configuration.md', () => {
  it('documents every key of the schema', () => {
    const keys = allKeys();
    expect(keys.size).toBeGreaterThan(50);
    // A key counts as documented when it appears as a word inside inline code (`tls.ca_file`, `{ start_time: ... }`).
    const missing = [...keys].filter((k) => !new RegExp('`[^`\\n]*\\b' + k + '\\b[^`\\n]*`').test(DOC));
    expect(missing).toEqual([]);
  });

  it('lists every integration in the receivers table, each with a section of its own', () => {
    const table = DOC.slice(DOC.indexOf('## receivers'), DOC.indexOf('### receivers[]'));
    for (const kind of INTEGRATION_KINDS) {
      expect(table, kind).toMatch(new RegExp('^\\| `' + kind + '` \\|', 'm'));
      expect(DOC, kind).toContain(`### receivers[].${kind}`);
    }
  });

  it('has an example that passes validation', async () => {
    const example = /## Example\s+```yaml\n([\s\S]*?)```/.exec(DOC)?.[1];
    expect(example).toBeDefined();
    const dir = await mkdtemp(join(tmpdir(), 'tw-docs-'));
    try {
      await writeFile(join(dir, 'smtp'), 'smtp-secret\n');
      const text = (example ?? '').replace('secrets/mft-password', join(dir, 'smtp')).replace('/run/secrets/smtp', join(dir, 'smtp'));
      const env = { MFT_USER: 'u', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X' };
      const { config } = parseConfigText(text, join(dir, 'tw.yaml'), { env });
      expect(config.receivers[1]?.email?.smtp.port).toBe(587);
      expect(config.route?.routes[0]?.receiver).toBe('ops-mail');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
