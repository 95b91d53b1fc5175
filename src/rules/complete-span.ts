import picomatch from 'picomatch';
import type { DataCompleteness } from './rule-evaluator.js';
import type { MatchSpec } from './rule-schema.js';

/** The configured sources a rule can see (those its `match.source` accepts; all when it names none). */
export function relevantSources(match: MatchSpec, sources: readonly string[]): string[] {
  const patterns = match.source;
  if (!patterns) return [...sources];
  const accepts = picomatch(patterns);
  return sources.filter((s) => accepts(s));
}

/**
 * The span in which every one of `sources` has each of `results` streams read without gaps: from the latest
 * `completeFrom` to the earliest `completeUntil`. Undefined while any of them has not been read at all (or
 * when there is no source), so a rule that needs whole data waits instead of judging half of it.
 */
export function completeSpan(
  sources: readonly string[],
  data: DataCompleteness,
  results: readonly ('success' | 'error')[],
): { from: number; until: number } | undefined {
  if (sources.length === 0) return undefined;
  let until = Infinity;
  let from = -Infinity;
  for (const s of sources) {
    for (const r of results) {
      const c = data.completeUntil(s, r);
      if (c === undefined) return undefined;
      until = Math.min(until, c);
      from = Math.max(from, data.completeFrom?.(s, r) ?? -Infinity);
    }
  }
  return { from, until };
}
