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

/** The glob as an RE2 pattern (for `simpleGlob`'s undecided values, and the property test's oracle). */
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
 * A glob (`*` and `?`, neither crossing `/`; every other character literal) matched in place: the same answer as
 * its RE2 translation, without running an automaton per rule per transfer (the 1,000-rule bench line pays for
 * every match; `BANK?` through re2js was 37 bytes of garbage a transfer in the 100-rule line). It never
 * backtracks, and takes at most the value's length times the glob's: the pieces between stars are found leftmost
 * in order, which is the best choice for what follows (an earlier piece leaves more room, and a shorter gap before
 * it holds no `/` if a longer one holds none), and the last piece is tried at the end only. RE2 answers when a glob
 * with a `?` meets a value with a surrogate pair (one `?` is one code point to RE2, two code units here), and for
 * globs holding surrogates.
 */
export function simpleGlob(glob: string): LinearRegex | undefined {
  if (SURROGATE.test(glob)) return undefined;
  const pieces = glob.split('*');
  const first = pieces[0] as string;
  const last = pieces[pieces.length - 1] as string;
  const middle = pieces.slice(1, -1);
  const min = pieces.reduce((n, piece) => n + piece.length, 0);
  const hasQuestion = glob.includes('?');
  let re2: LinearRegex | undefined;
  const matches = (value: string): boolean => {
    const n = value.length;
    if (n < min) return false;
    // Pieces are placed by code unit: right unless a `?` stands for a surrogate pair (rare in names; RE2 decides).
    if (hasQuestion && SURROGATE.test(value)) return (re2 ??= globToRe2(glob)).matches(value);
    if (pieces.length === 1) return n === min && pieceAt(value, 0, first);
    if (!pieceAt(value, 0, first)) return false;
    let from = first.length;
    const lastStart = n - last.length;
    for (const piece of middle) {
      let found = -1;
      for (let p = from; p + piece.length <= lastStart; p++) {
        if (pieceAt(value, p, piece)) {
          found = p;
          break;
        }
        // The gap before any later place would hold this `/`.
        if (value.charCodeAt(p) === SLASH) return false;
      }
      if (found < 0) return false;
      from = found + piece.length;
    }
    if (lastStart < from || !pieceAt(value, lastStart, last)) return false;
    // No `/` in the last gap, looked for in place (a slice of it per test was a string per rule per transfer).
    const slash = value.indexOf('/', from);
    return slash < 0 || slash >= lastStart;
  };
  return { source: glob, matches };
}

const SURROGATE = /[\uD800-\uDFFF]/;
const SLASH = 0x2f;
const QUESTION = 0x3f;

/** Whether a star-free piece of a glob matches `value` at `at` (the caller has checked it fits). */
function pieceAt(value: string, at: number, piece: string): boolean {
  for (let j = 0; j < piece.length; j++) {
    const g = piece.charCodeAt(j);
    const v = value.charCodeAt(at + j);
    if (g === QUESTION ? v === SLASH : g !== v) return false;
  }
  return true;
}

function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** `a/b/c.RET` → `c.RET`; a trailing `/` is ignored (`a/b/` → `b`). */
function baseName(value: string): string {
  // The last answer is kept: the pattern lists of every candidate rule ask for the same transfer's file in turn,
  // and each slice was a string of its own (a single entry: the answer depends on the value alone).
  if (value === lastBase.of) return lastBase.name;
  const end = value.endsWith('/') ? value.length - 1 : value.length;
  lastBase.of = value;
  lastBase.name = value.slice(value.lastIndexOf('/', end - 1) + 1, end);
  return lastBase.name;
}

const lastBase = { of: '', name: '' };

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
