import type { Labels } from '../alerts/alert.js';
import { transferLabel, type LabelName, type Transfer } from '../source/transfer.js';

/**
 * The group a transfer belongs to under `group_by`: its labels and a map key. NUL cannot occur in a label
 * value taken from JSON text we keep, so joining with it gives one key per distinct value combination.
 */
export function groupOf(t: Transfer, names: readonly LabelName[]): { key: string; labels: Labels } {
  const labels: Labels = {};
  for (const name of names) labels[name] = transferLabel(t, name);
  return { key: names.map((n) => labels[n]).join('\u0000'), labels };
}
