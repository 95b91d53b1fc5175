import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { buildSchemas, outdatedSchemas, SCHEMAS_DIR } from '../../scripts/build-schemas.js';
import { ruleTypeNames } from '../../src/rules/registry.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ruleFiles = readdirSync(path.join(root, 'rules'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => path.join(root, 'rules', f));

function validator(name: string) {
  const schema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, name), 'utf8')) as Record<string, unknown>;
  // strict: no keyword Ajv does not know (strictRequired is off: `not: {required}` names keys of the parent on purpose).
  // Formats (uri, date) are left to `check`.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(schema);
  return (data: unknown) => (validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

const yamlFile = (file: string): unknown => parse(readFileSync(file, 'utf8'));

describe('JSON Schemas (schemas/*.json)', () => {
  it('are up to date with the zod schemas and the rule registry', () => {
    const outdated = outdatedSchemas();
    expect(outdated, `out of date: ${outdated.join(', ')}; run \`npm run schemas\` and commit schemas/`).toEqual([]);
  });

  it('name every registered rule type', () => {
    const rules = JSON.parse(buildSchemas()['rules.schema.json'] ?? '{}') as { properties: { rules: { items: { oneOf: Array<{ properties: { type: { const: string } } }> } } } };
    const types = rules.properties.rules.items.oneOf.map((o) => o.properties.type.const);
    expect(types.sort()).toEqual(ruleTypeNames().sort());
    expect(types).toEqual(expect.arrayContaining(['error_burst', 'missing_file']));
  });

  it('accept the bundled rule files and the example config, as written (with ${VAR} references)', () => {
    const rules = validator('rules.schema.json');
    expect(ruleFiles.length).toBeGreaterThan(0);
    for (const file of ruleFiles) expect(rules(yamlFile(file)), file).toEqual([]);
    const config = validator('config.schema.json');
    expect(config(yamlFile(path.join(root, 'config.example.yaml')))).toEqual([]);
  });

  it('reject what check rejects: unknown keys, unknown rule types, bad durations, both secret forms', () => {
    const rules = validator('rules.schema.json');
    const burst = { name: 'B', type: 'error_burst', threshold: 5, window: '10m' };
    expect(rules({ rules: [burst] })).toEqual([]);
    expect(rules({ rules: [{ ...burst, treshold: 5 }] })).not.toEqual([]);
    expect(rules({ rules: [{ ...burst, type: 'nope' }] })).not.toEqual([]);
    expect(rules({ rules: [{ ...burst, window: '10 minutes' }] })).not.toEqual([]);
    expect(rules({ rules: [{ ...burst, window: '1h30m' }] })).toEqual([]);
    // Rule files have no ${VAR} substitution, so a reference is not a number there.
    expect(rules({ rules: [{ ...burst, threshold: '${T}' }] })).not.toEqual([]);

    const config = validator('config.schema.json');
    const source = { name: 'prod', base_url: 'https://mft.example.com/api', username: 'u' };
    expect(config({ sources: [{ ...source, password: 'p' }] })).toEqual([]);
    expect(config({ sources: [{ ...source, password_file: '/run/secrets/p' }] })).toEqual([]);
    expect(config({ sources: [source] })).not.toEqual([]);
    expect(config({ sources: [{ ...source, password: 'p', password_file: '/run/secrets/p' }] })).not.toEqual([]);
    expect(config({ sources: [{ ...source, password: 'p', timeout: 'soon' }] })).not.toEqual([]);
    expect(config({ sources: [{ ...source, password: 'p' }], pol: {} })).not.toEqual([]);
    expect(config({ sources: [{ ...source, password: 'p' }], poll: { page_size: '${PAGE_SIZE}' } })).toEqual([]);
    expect(config({ sources: [{ ...source, password: 'p' }], poll: { page_size: 'many' } })).not.toEqual([]);
    const slack = (s: Record<string, unknown>) => config({ sources: [{ ...source, password: 'p' }], receivers: [{ name: 'r', slack: s }] });
    expect(slack({ webhook_url_file: 'slack-url' })).toEqual([]);
    expect(slack({})).not.toEqual([]);
  });

  it('are referenced from the examples by a yaml-language-server line that resolves to the file', () => {
    const expectations = [
      ...ruleFiles.map((file) => ({ file, schema: 'rules.schema.json' })),
      { file: path.join(root, 'config.example.yaml'), schema: 'config.schema.json' },
    ];
    for (const { file, schema } of expectations) {
      const first = readFileSync(file, 'utf8').split('\n')[0] ?? '';
      const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
      expect(m, `${file} must start with "# yaml-language-server: $schema=..."`).not.toBeNull();
      expect(path.resolve(path.dirname(file), m?.[1] ?? '')).toBe(path.join(SCHEMAS_DIR, schema));
    }
  });
});
