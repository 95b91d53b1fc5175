import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rulesFile = z.object({ rules: z.array(z.object({ name: z.string(), annotations: z.record(z.string(), z.string()).optional() })) });

describe('runbooks of the shipped rules', () => {
  const rules = readdirSync(path.join(root, 'rules'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => rulesFile.parse(parse(readFileSync(path.join(root, 'rules', f), 'utf8'))).rules);

  it('every shipped rule links /runbooks/<its name>, and that page exists and names the alert', () => {
    expect(rules.length).toBeGreaterThan(10);
    for (const rule of rules) {
      expect(rule.annotations?.['runbook_url'], rule.name).toBe(`/runbooks/${rule.name}`);
      const page = readFileSync(path.join(root, 'docs/runbooks', `${rule.name}.md`), 'utf8');
      expect(page.startsWith(`# ${rule.name}`), rule.name).toBe(true);
    }
  });

  it('the runbooks ship in the npm package', () => {
    const pkg = z.object({ files: z.array(z.string()) }).parse(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
    expect(pkg.files).toContain('docs/runbooks');
  });
});
