import type { Labels, TransferSample } from '../alerts/alert.js';
import type { LabelName, Transfer } from '../source/transfer.js';
import { groupKey, groupLabels } from './group-key.js';
import { sampleOf } from './transfer-samples.js';

/** A transfer's group key under one `group_by` list. */
export type GroupKeyOf = (t: Transfer) => string;
/** A transfer's group labels under one `group_by` list. */
export type GroupLabelsOf = (t: Transfer) => Labels;

/**
 * What the rules of one engine derive from the transfer being observed, derived once for all of them: the sample
 * an alert shows of it, and its group key under each distinct `group_by`. Each matched rule used to sample the
 * transfer (an object of six fields) and key it (a string built and hashed) again: in the 1,000-rule bench a
 * failure reaches ~66 rules that group in only four ways, and deriving once read 22% more records/s there
 * (docs/benchmarks-rounds.md, fifteenth round).
 *
 * Each part remembers the last transfer it was asked about, by identity: the engine hands one transfer to all its
 * matched rules before the next, and transfers are never changed once made. A shared sample is never changed
 * either: alerts copy samples when they are read (`toAlert`).
 */
export class TransferParts {
  private sampled: Transfer | undefined;
  private lastSample: TransferSample | undefined;
  private readonly keys = new Map<string, GroupKeyOf>();
  private readonly labels = new Map<string, GroupLabelsOf>();

  sample(t: Transfer): TransferSample {
    if (t !== this.sampled || this.lastSample === undefined) {
      this.lastSample = sampleOf(t);
      this.sampled = t;
    }
    return this.lastSample;
  }

  /** The group key function for `names`: one for every rule of the engine that groups by the same labels. */
  groupKeyOf(names: readonly LabelName[]): GroupKeyOf {
    return sharedFor(this.keys, names, groupKey);
  }

  /**
   * The group labels function for `names`, shared in the same way: a group's labels are made once for every rule
   * that creates the group from the same transfer (never changed: alerts build their own label sets from them).
   */
  groupLabelsOf(names: readonly LabelName[]): GroupLabelsOf {
    return sharedFor(this.labels, names, groupLabels);
  }
}

/** The function of `cache` for the label list `names` (one per distinct list), made on first use. */
function sharedFor<T>(cache: Map<string, (t: Transfer) => T>, names: readonly LabelName[], derive: (t: Transfer, names: readonly LabelName[]) => T): (t: Transfer) => T {
  const signature = names.join('\u0000');
  let of = cache.get(signature);
  if (!of) {
    const own = [...names];
    cache.set(signature, (of = rememberingLast((t) => derive(t, own))));
  }
  return of;
}

/** `derive`, remembering its answer for the last transfer it was asked about (by identity). */
function rememberingLast<T>(derive: (t: Transfer) => T): (t: Transfer) => T {
  let last: Transfer | undefined;
  let value: T | undefined;
  return (t) => {
    if (t !== last) {
      value = derive(t);
      last = t;
    }
    return value as T;
  };
}
