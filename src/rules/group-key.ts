import type { Labels } from '../alerts/alert.js';
import { transferLabel, type LabelName, type Transfer } from '../source/transfer.js';

/**
 * The map key of the group a transfer belongs to under `group_by`. NUL cannot occur in a label value taken from
 * JSON text we keep, so joining with it gives one key per distinct value combination. Built without the group's
 * labels: rules look a group up for every transfer they keep, and create its labels only once (`groupLabels`).
 */
export function groupKey(t: Transfer, names: readonly LabelName[]): string {
  let key: string | undefined;
  for (const name of names) key = key === undefined ? transferLabel(t, name) : `${key}\u0000${transferLabel(t, name)}`;
  return key ?? '';
}

/** The labels of the group a transfer belongs to under `group_by`. */
export function groupLabels(t: Transfer, names: readonly LabelName[]): Labels {
  const labels: Labels = {};
  for (const name of names) labels[name] = transferLabel(t, name);
  return labels;
}

