import picomatch from 'picomatch';
import { transferLabel, type LabelName, type Transfer } from '../source/transfer.js';
import type { MatchSpec } from './rule-schema.js';

/**
 * A compiled `match`: per label a list of glob patterns, any of which may match; every listed label must
 * match. File names may be paths: a pattern without `/` is matched against the base name as well.
 */
export type TransferMatcher = (t: Transfer) => boolean;

const GLOB_OPTIONS = { dot: true, basename: true } as const;

export function compileMatch(spec: MatchSpec): TransferMatcher {
  const checks: { label: LabelName; test: (value: string) => boolean }[] = [];
  for (const [label, patterns] of Object.entries(spec) as [LabelName, string[] | undefined][]) {
    if (!patterns) continue;
    const tests = patterns.map((p) => picomatch(p, GLOB_OPTIONS));
    checks.push({ label, test: (value) => tests.some((test) => test(value)) });
  }
  return (t) => checks.every((c) => c.test(transferLabel(t, c.label)));
}

/** The literal values of a pattern list when none of them is a glob; undefined if any is. */
export function exactValues(patterns: readonly string[]): string[] | undefined {
  for (const p of patterns) if (picomatch.scan(p).isGlob) return undefined;
  return [...patterns];
}
