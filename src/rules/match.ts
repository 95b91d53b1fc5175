import { LABEL_NAMES, transferLabel, type LabelName, type Transfer } from '../source/transfer.js';
import { compileLinearRegex, quoteRegex, type LinearRegex } from '../util/linear-regex.js';
import type { MatchSpec } from './rule-schema.js';

/**
 * A compiled `match`: per label a list of glob patterns, any of which may match; every listed label must
 * match. File names may be paths: a pattern without `/` is matched against the base name as well.
 */
export type TransferMatcher = (t: Transfer) => boolean;

/**
 * The contract's glob language is `*` (any run of characters but `/`) and `?` (one character but `/`); every
 * other character is literal. Patterns are translated here rather than handed to picomatch, whose extglobs,
 * braces, classes and `|` alternation would make file names such as `EXTRATO (1).RET` or `A|B.RET` patterns
 * that do not match themselves or that match unrelated names. The translation runs on RE2 (linear time):
 * as a backtracking `RegExp`, `*_*_*.RET` took 24 s against one crafted 8 KB file name from the service.
 */
function globToRegex(glob: string): LinearRegex {
  return simpleGlob(glob) ?? globToRe2(glob);
}

/** The glob as an RE2 pattern, whatever its shape (exported for the property test against `simpleGlob`). */
export function globToRe2(glob: string): LinearRegex {
  let source = '';
  let literal = '';
  const flush = (): void => {
    if (literal !== '') source += quoteRegex(literal);
    literal = '';
  };
  for (const ch of glob) {
    if (ch === '*' || ch === '?') {
      flush();
      source += ch === '*' ? '[^/]*' : '[^/]';
    } else {
      literal += ch;
    }
  }
  flush();
  return compileLinearRegex(source);
}

/**
 * The globs people write most (`PROD*`, `*.REM`, `RET_*.RET`: at most one `*`, no `?`) as a prefix and suffix
 * test: the same answer as the RE2 translation, without running an automaton per rule per transfer (the
 * 1,000-rule bench line pays for every match). Linear too: two comparisons and one scan for `/`.
 */
export function simpleGlob(glob: string): LinearRegex | undefined {
  if (glob.includes('?')) return undefined;
  const star = glob.indexOf('*');
  if (star < 0 || glob.indexOf('*', star + 1) >= 0) return undefined;
  const prefix = glob.slice(0, star);
  const suffix = glob.slice(star + 1);
  const min = prefix.length + suffix.length;
  return {
    source: glob,
    // No `/` in what the `*` covers, looked for in place (a slice of it per test was a string per rule per transfer).
    matches: (value) => {
      if (value.length < min || !value.startsWith(prefix) || !value.endsWith(suffix)) return false;
      const slash = value.indexOf('/', prefix.length);
      return slash < 0 || slash >= value.length - suffix.length;
    },
  };
}

function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** `a/b/c.RET` → `c.RET`; a trailing `/` is ignored (`a/b/` → `b`). */
function baseName(value: string): string {
  const end = value.endsWith('/') ? value.length - 1 : value.length;
  return value.slice(value.lastIndexOf('/', end - 1) + 1, end);
}

/**
 * One label's patterns as plain regular expressions, tested directly: matching runs for every candidate rule
 * of every transfer (the bench measured picomatch's own matcher as a sixth of the pipeline).
 */
function compilePatterns(patterns: readonly string[]): (value: string) => boolean {
  const compiled = patterns.map((p) => ({ glob: p, re: globToRegex(p), anyDepth: !p.includes('/') }));
  return (value) => {
    if (value === '') return false;
    let base: string | undefined;
    for (const c of compiled) {
      if (value === c.glob || c.re.matches(value)) return true;
      if (c.anyDepth && value.includes('/') && c.re.matches((base ??= baseName(value)))) return true;
    }
    return false;
  };
}

/**
 * A pattern list's test that remembers its last answer: a transfer visits every candidate rule, and rules
 * tend to share pattern lists (`mft_instance: [PROD*]` in hundreds of rules), so one transfer's label value
 * is asked about again and again. The answer depends on the value alone.
 */
function rememberingLast(test: (value: string) => boolean): (value: string) => boolean {
  let lastValue: string | undefined;
  let lastAnswer = false;
  return (value) => {
    if (value !== lastValue) {
      lastAnswer = test(value);
      lastValue = value;
    }
    return lastAnswer;
  };
}

/** Compiled pattern-list tests shared by the matchers compiled with it, keyed by the list (e.g. per rule engine). */
export type SharedPatternTests = Map<string, (value: string) => boolean>;

export function compileMatch(spec: MatchSpec, shared: SharedPatternTests = new Map()): TransferMatcher {
  const checks: { label: LabelName; test: (value: string) => boolean }[] = [];
  for (const [label, patterns] of Object.entries(spec) as [LabelName, string[] | undefined][]) {
    if (!patterns) continue;
    const key = JSON.stringify(patterns);
    let test = shared.get(key);
    if (!test) shared.set(key, (test = rememberingLast(compilePatterns(patterns))));
    checks.push({ label, test });
  }
  return (t) => {
    for (const c of checks) if (!c.test(transferLabel(t, c.label))) return false;
    return true;
  };
}

/** The literal values of a pattern list when none of them is a glob; undefined if any is. */
export function exactValues(patterns: readonly string[]): string[] | undefined {
  for (const p of patterns) if (isGlob(p)) return undefined;
  return [...patterns];
}

/**
 * A key that two match specs share exactly when they select the same transfers by construction: the same
 * pattern lists under the same labels, whatever the order of the labels or of the patterns in a list (a list
 * matches when any of its patterns does). Rules with the same selection run one matcher between them.
 */
export function selectionKey(spec: MatchSpec): string {
  const parts: Array<[LabelName, string[]]> = [];
  for (const label of LABEL_NAMES) {
    const patterns = spec[label];
    if (patterns) parts.push([label, [...new Set(patterns)].sort()]);
  }
  return JSON.stringify(parts);
}
