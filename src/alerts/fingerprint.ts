import { createHash } from 'node:crypto';
import type { Labels } from './alert.js';

/**
 * An alert's identity is its full label set. The fingerprint is a stable hash of the sorted label pairs
 * (names and values joined with separators that cannot occur in UTF-8 text), 16 hex digits like Alertmanager's.
 */
export function fingerprint(labels: Labels): string {
  const hash = createHash('sha256');
  for (const name of Object.keys(labels).sort()) {
    hash.update(name);
    hash.update('\u00ff');
    hash.update(labels[name] ?? '');
    hash.update('\u00fe');
  }
  return hash.digest('hex').slice(0, 16);
}
