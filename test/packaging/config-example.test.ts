import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon-process.js';
import { EXAMPLE_ENV } from './example-env.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXAMPLE = path.join(root, 'config.example.yaml');

/** Every property name anywhere in a JSON Schema. */
function propertyNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => propertyNames(n, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && value && typeof value === 'object') Object.keys(value).forEach((k) => out.add(k));
      propertyNames(value, out);
    }
  }
  return out;
}

describe('config.example.yaml', () => {
  it('passes `transfer-watch check` with its environment, together with every bundled rule file', async () => {
    const { code, stdout, stderr } = await runCli(['check', '--config', EXAMPLE], { env: EXAMPLE_ENV });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`OK: ${EXAMPLE}`);
    const bundled = readdirSync(path.join(root, 'rules')).filter((f) => f.endsWith('.yaml'));
    expect(bundled.length).toBeGreaterThan(0);
    for (const f of bundled) expect(stdout).toContain(`OK: ${path.join(root, 'rules', f)}`);
  });

  it('takes its secrets from the environment: without them check passes and warns of each missing variable at its line; --require-env fails', async () => {
    const env = Object.fromEntries(Object.keys(EXAMPLE_ENV).map((k) => [k, undefined]));
    const { code, stderr } = await runCli(['check', '--config', EXAMPLE], { env: env as NodeJS.ProcessEnv });
    expect(code).toBe(0);
    for (const name of Object.keys(EXAMPLE_ENV)) expect(stderr).toMatch(new RegExp(`config\\.example\\.yaml:\\d+:\\d+: warning: environment variable ${name} is not set`));
    const strict = await runCli(['check', '--config', EXAMPLE, '--require-env'], { env: env as NodeJS.ProcessEnv });
    expect(strict.code).toBe(1);
    for (const name of Object.keys(EXAMPLE_ENV)) expect(strict.stderr).toMatch(new RegExp(`config\\.example\\.yaml:\\d+:\\d+: environment variable ${name} is not set`));
  });

  it('shows every option of the config schema (set, or as a commented-out line)', () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const schema: unknown = JSON.parse(readFileSync(path.join(root, 'schemas/config.schema.json'), 'utf8'));
    const missing = [...propertyNames(schema)].filter((key) => !new RegExp(`(^|[\\s{,#-])${key}:`, 'm').test(text));
    expect(missing, 'options missing from config.example.yaml').toEqual([]);
  });
});
