import { readFileSync } from 'node:fs';

/** The version in package.json (two folders up from dist/cli or src/cli). */
export function packageVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return pkg && typeof pkg === 'object' && 'version' in pkg && typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}
