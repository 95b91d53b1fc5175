/** A value path as people read it in messages: `sources[0].tls.ca_file`; `` for the document itself. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/** A value path's identity for sets and maps (segments cannot contain NUL). */
export function pathKey(path: readonly PropertyKey[]): string {
  return path.map(String).join('\u0000');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` inside plain data, or undefined when any step is missing. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else if (isRecord(current) && typeof segment === 'string') current = current[segment];
    else return undefined;
  }
  return current;
}

/** Replace the value at an existing `path` inside plain data; returns false when the path does not exist. */
export function setValueAt(root: unknown, path: readonly PropertyKey[], value: unknown): boolean {
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1];
  const parent = valueAt(root, parentPath);
  if (Array.isArray(parent) && typeof last === 'number' && last < parent.length) {
    parent[last] = value;
    return true;
  }
  if (isRecord(parent) && typeof last === 'string' && last in parent) {
    parent[last] = value;
    return true;
  }
  return false;
}
