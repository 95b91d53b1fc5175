/**
 * The same items (`===`) in the same order: whether an evaluator's candidates, a candidate's samples or an alert's
 * silences are the ones it had. A loop rather than `every`: evaluations compare arrays of every firing alert.
 */
export function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
