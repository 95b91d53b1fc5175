import { RE2JS } from 're2js';
import { TransferWatchError } from './errors.js';

/**
 * A regular expression with RE2 semantics, matched in time linear in the input (re2js, a port of RE2).
 *
 * Why not `RegExp`: V8's engine backtracks, so one pattern such as `(.*.*)*X` against a 44-character label
 * value freezes the process for minutes, and a persisted silence froze it again after every restart. Every
 * place where a pattern someone typed meets data (matchers of silences, inhibitions and routes, API filters,
 * rule globs) goes through this instead. RE2 is also what Alertmanager and Prometheus users write: `(?i)`
 * works, backreferences and lookarounds are refused when the pattern is compiled, not when it is matched.
 */
export interface LinearRegex {
  /** The pattern as written (unanchored). */
  readonly source: string;
  /** Whether the whole value matches (the pattern is anchored at both ends, as Alertmanager's are). */
  matches(value: string): boolean;
}

/** A pattern RE2 does not accept (syntax, backreferences, lookarounds, too large a program). */
export class RegexSyntaxError extends TransferWatchError {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super('regex_invalid', `invalid regular expression ${JSON.stringify(pattern)}: ${reason}`);
    this.name = 'RegexSyntaxError';
  }
}

/** Longest pattern accepted: RE2's program grows with the pattern, and nobody types a 4 KB label matcher. */
export const MAX_PATTERN_LENGTH = 4096;

/** Compile `source` as an anchored RE2 pattern; throws RegexSyntaxError with RE2's reason. */
export function compileLinearRegex(source: string): LinearRegex {
  if (source.length > MAX_PATTERN_LENGTH) throw new RegexSyntaxError(`${source.slice(0, 40)}…`, `longer than ${MAX_PATTERN_LENGTH} characters`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    throw new RegexSyntaxError(source, reason);
  }
  return { source, matches: (value) => re.testExact(value) };
}

/** A literal text as an RE2 pattern that matches exactly it. */
export function quoteRegex(text: string): string {
  return RE2JS.quote(text);
}
