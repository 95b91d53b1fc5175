import type { z } from 'zod';
import { nearestKey } from './nearest-key.js';
import type { Problem } from './problem.js';
import { schemaKeysAt } from './schema-keys.js';
import { formatPath, pathKey, valueAt } from './value-path.js';
import type { YamlLocator } from './yaml-locator.js';

export interface IssueContext {
  schema: z.core.$ZodType;
  /** The data that was validated, to tell a missing key from a wrong value. */
  data: unknown;
  locator: YamlLocator;
  /** Field path → where the user actually wrote it (e.g. the `password_file` key). */
  movedFrom?: ReadonlyMap<string, PropertyKey[]>;
  /** Field paths whose problem was already reported by an earlier stage. */
  reported?: ReadonlySet<string>;
}

/**
 * Turns zod issues into positioned problems that name the field path: the key's position for unknown
 * keys, the value's for bad values, the enclosing object's for missing keys.
 */
export function issuesToProblems(issues: readonly z.core.$ZodIssue[], ctx: IssueContext): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const path = issue.path;
    if (ctx.reported?.has(pathKey(path))) continue;
    const where = ctx.movedFrom?.get(pathKey(path)) ?? path;
    const label = formatPath(path);
    if (issue.code === 'unrecognized_keys') {
      const valid = schemaKeysAt(ctx.schema, path);
      for (const key of issue.keys) {
        const suggestion = nearestKey(key, valid);
        const hint = suggestion ? ` (did you mean "${suggestion}"?)` : '';
        const scope = label === '' ? ' at top level' : ` in ${label}`;
        problems.push(ctx.locator.problemAt([...path, key], `unknown key "${key}"${scope}${hint}`, 'key'));
      }
      continue;
    }
    if (issue.code === 'invalid_type' && valueAt(ctx.data, path) === undefined && path.length > 0) {
      const parent = path.slice(0, -1);
      const key = String(path[path.length - 1]);
      const scope = parent.length === 0 ? '' : `${formatPath(parent)}: `;
      problems.push(ctx.locator.problemAt(parent, `${scope}missing required key "${key}"`));
      continue;
    }
    const message = plainMessage(issue.message);
    problems.push(ctx.locator.problemAt(where, label === '' ? message : `${label}: ${message}`));
  }
  return problems;
}

const ARTICLE: Readonly<Record<string, string>> = { array: 'a list', object: 'a map', number: 'a number', string: 'a string', boolean: 'true or false', null: 'nothing (null)', undefined: 'nothing', int: 'a whole number' };

/**
 * zod's wording in words a person editing YAML reads at once: "Invalid input: expected number, received
 * string" becomes "expected a number, got a text".
 */
export function plainMessage(message: string): string {
  const typed = /^Invalid input: expected (\w+), received (\w+)$/.exec(message);
  if (typed) return `expected ${ARTICLE[typed[1] ?? ''] ?? typed[1]}, got ${ARTICLE[typed[2] ?? ''] ?? typed[2]}`;
  const bound = /^Too (small|big): expected (?:number|int) to be ([<>]=?)(\S+)$/.exec(message);
  if (bound) {
    const words: Record<string, string> = { '>=': 'at least', '>': 'greater than', '<=': 'at most', '<': 'less than' };
    return `must be ${words[bound[2] ?? ''] ?? bound[2]} ${bound[3]}`;
  }
  return message.replace(/^Invalid input: /, '');
}
