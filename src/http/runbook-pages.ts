import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The runbooks shipped with the package (`docs/runbooks/`), two folders up from dist/http or src/http. */
export const SHIPPED_RUNBOOKS_DIR = fileURLToPath(new URL('../../docs/runbooks/', import.meta.url));

/** A runbook name is an alert name: letters, digits and `_` (no dots, no slashes: nothing outside the folder). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The runbook of one alert as Markdown text, or undefined when there is none. Served at `/runbooks/<name>` so
 * a rule's relative `runbook_url: /runbooks/<name>` works out of the box wherever the daemon runs.
 */
export async function readRunbook(name: string, dir: string = SHIPPED_RUNBOOKS_DIR): Promise<string | undefined> {
  if (!NAME.test(name)) return undefined;
  try {
    return await readFile(path.join(dir, `${name}.md`), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
