import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { HA_SECRET_FIELDS } from '../ha/ha-schema.js';
import { HISTORY_SECRET_FIELDS } from '../history/history-schema.js';
import { RECEIVER_SECRET_FIELDS, RECEIVER_SECRET_MAPS } from '../notify/integrations/registry.js';
import type { Problem } from '../base/problem.js';
import { formatPath, isRecord, pathKey } from '../base/value-path.js';
import type { YamlLocator } from '../base/yaml-locator.js';

/**
 * Secret fields, each of which also accepts `<field>_file` (contract section 2). Listed explicitly rather
 * than "any key ending in _file", because `ca_file` is a path, not a secret, and must stay a path.
 * `*` matches any list index.
 */
export const SECRET_FIELDS: readonly (readonly string[])[] = [['sources', '*', 'password'], ...RECEIVER_SECRET_FIELDS, ...HA_SECRET_FIELDS, ...HISTORY_SECRET_FIELDS];

/** Values that are secret but have no `_file` form: custom webhook headers usually carry credentials. */
const SECRET_MAPS: readonly (readonly string[])[] = RECEIVER_SECRET_MAPS;

export interface SecretFilesResult {
  problems: Problem[];
  /** Field path → path of the `_file` key it was read from, so later problems point at what the user wrote. */
  movedFrom: Map<string, PropertyKey[]>;
  /** Field paths whose problem is already reported; validation issues there would only repeat it. */
  reported: Set<string>;
}

export interface SecretFilesOptions {
  /** Folder that relative `_file` paths are resolved against: the config file's folder. */
  dir: string;
  locator: YamlLocator;
  readFile?: (path: string) => string;
}

/** Reads every `<field>_file` into `<field>` in place (the data is the loader's own copy). */
export function resolveSecretFiles(root: unknown, options: SecretFilesOptions): SecretFilesResult {
  const readFile = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const result: SecretFilesResult = { problems: [], movedFrom: new Map(), reported: new Set() };
  for (const pattern of SECRET_FIELDS) {
    const field = pattern[pattern.length - 1] ?? '';
    const fileKey = `${field}_file`;
    for (const { value: parent, path: parentPath } of matching(root, pattern.slice(0, -1), [])) {
      if (!isRecord(parent)) continue;
      const fieldPath = [...parentPath, field];
      const filePath = [...parentPath, fileKey];
      if (!(fileKey in parent)) continue;
      const name = parent[fileKey];
      delete parent[fileKey];
      if (field in parent) {
        result.problems.push(
          options.locator.problemAt(filePath, `${formatPath(parentPath)}: both "${field}" and "${fileKey}" are set; use only one`, 'key'),
        );
        result.reported.add(pathKey(fieldPath));
        continue;
      }
      if (typeof name !== 'string' || name === '') {
        result.problems.push(options.locator.problemAt(filePath, `${formatPath(filePath)}: must be the path of a file`));
        result.reported.add(pathKey(fieldPath));
        parent[field] = '';
        continue;
      }
      const full = isAbsolute(name) ? name : resolve(options.dir, name);
      try {
        // A trailing newline is almost always the editor's, never part of the secret.
        const secret = readFile(full).replace(/\r?\n+$/, '');
        parent[field] = secret;
        result.movedFrom.set(pathKey(fieldPath), filePath);
      } catch (err) {
        // The file name is not secret; its content (which we never got) would be. Only the errno code is shown.
        result.problems.push(
          options.locator.problemAt(filePath, `${formatPath(filePath)}: cannot read secret file "${full}" (${errnoCode(err)})`, 'key'),
        );
        result.reported.add(pathKey(fieldPath));
        parent[field] = '';
      }
    }
  }
  return result;
}

/** Every secret value in config data (raw or validated), for redaction. Numbers count: they may still be coerced to text. */
export function collectSecrets(root: unknown): string[] {
  const secrets = new Set<string>();
  const add = (v: unknown): void => {
    if ((typeof v === 'string' || typeof v === 'number') && v !== '') secrets.add(String(v));
  };
  for (const pattern of SECRET_FIELDS) for (const { value } of matching(root, pattern, [])) add(value);
  for (const pattern of SECRET_MAPS) {
    for (const { value } of matching(root, pattern, [])) if (isRecord(value)) Object.values(value).forEach(add);
  }
  return [...secrets];
}

function* matching(value: unknown, pattern: readonly string[], path: PropertyKey[]): Generator<{ value: unknown; path: PropertyKey[] }> {
  if (pattern.length === 0) {
    yield { value, path };
    return;
  }
  const [head, ...rest] = pattern;
  if (head === '*') {
    if (!Array.isArray(value)) return;
    for (const [i, item] of value.entries()) yield* matching(item, rest, [...path, i]);
  } else if (head !== undefined && isRecord(value) && head in value) {
    yield* matching(value[head], rest, [...path, head]);
  }
}

function errnoCode(err: unknown): string {
  if (isRecord(err) && typeof err.code === 'string') return err.code;
  return 'unreadable';
}
