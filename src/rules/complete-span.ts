import picomatch from 'picomatch';
import type { DataCompleteness, EvaluatorContext } from './rule-evaluator.js';
import type { MatchSpec, RuleBase } from './rule-schema.js';

/** The configured sources a rule can see (those its `match.source` accepts; all when it names none). */
export function relevantSources(match: MatchSpec, sources: readonly string[]): string[] {
  const patterns = match.source;
  if (!patterns) return [...sources];
  const accepts = picomatch(patterns);
  return sources.filter((s) => accepts(s));
}

/**
 * The sources of a rule that judges only data read whole (see `completeSpan`). With none it can never decide:
 * said once at load, or a typo in `match.source` would silence the rule without a word.
 */
export function sourcesToJudge(rule: RuleBase, ctx: EvaluatorContext): string[] {
  const sources = relevantSources(rule.match, ctx.sources);
  if (sources.length === 0) ctx.logger.warn({ rule: rule.name }, `${rule.type} rule matches no configured source; it will never decide`);
  return sources;
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
