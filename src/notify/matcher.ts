import type { Labels } from '../alerts/alert.js';
import { TransferWatchError } from '../util/errors.js';
import { compileLinearRegex, type LinearRegex } from '../util/linear-regex.js';

/**
 * Label matchers in Alertmanager's syntax: `name="value"`, `name!="value"`, `name=~"regex"`, `name!~"regex"`.
 * Values may be double-quoted (with `\"`, `\\` and `\n` escapes) or bare. Regexes are anchored at both ends,
 * as in Alertmanager, so `=~"PROD.*"` does not match `XPROD1`. A label that is absent has the value "".
 * Regexes have RE2 semantics and are matched in linear time (util/linear-regex.ts): a matcher from an open API
 * read or a persisted silence cannot freeze the daemon.
 */
export type MatchType = '=' | '!=' | '=~' | '!~';

export interface Matcher {
  readonly name: string;
  readonly type: MatchType;
  readonly value: string;
  /** The anchored RE2 regex of `=~` / `!~`, compiled once. */
  readonly regex?: LinearRegex | undefined;
}

/** Build a matcher; throws MatcherError on an invalid regex. */
export function makeMatcher(name: string, type: MatchType, value: string): Matcher {
  if (type === '=' || type === '!=') return { name, type, value };
  try {
    return { name, type, value, regex: compileLinearRegex(value) };
  } catch (err) {
    throw new MatcherError((err as Error).message, 1);
  }
}

export class MatcherError extends TransferWatchError {
  constructor(
    message: string,
    /** 1-based column in the matcher text where the problem is. */
    readonly col: number,
  ) {
    super('matcher_invalid', message);
    this.name = 'MatcherError';
  }
}

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const SPACE = /\s*/y;

/** Parse one matcher (`severity="critical"`). */
export function parseMatcher(text: string): Matcher {
  const parser = new MatcherParser(text);
  const matcher = parser.matcher();
  parser.skipSpace();
  if (!parser.atEnd()) parser.fail(`unexpected "${parser.rest()}" after the matcher`);
  return matcher;
}

/**
 * Parse a list of matchers as Alertmanager accepts it in one string: `a="1", b=~"x"` or `{a="1", b=~"x"}`.
 * An empty string or `{}` is an empty list.
 */
export function parseMatchers(text: string): Matcher[] {
  const parser = new MatcherParser(text);
  parser.skipSpace();
  const braced = parser.eat('{');
  const out: Matcher[] = [];
  parser.skipSpace();
  while (!parser.atEnd() && !parser.peek('}')) {
    out.push(parser.matcher());
    parser.skipSpace();
    if (!parser.eat(',')) break;
    parser.skipSpace();
  }
  if (braced && !parser.eat('}')) parser.fail('missing closing "}"');
  parser.skipSpace();
  if (!parser.atEnd()) parser.fail(`unexpected "${parser.rest()}"`);
  return out;
}

class MatcherParser {
  private pos = 0;

  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  rest(): string {
    return this.text.slice(this.pos);
  }

  peek(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  eat(s: string): boolean {
    if (!this.peek(s)) return false;
    this.pos += s.length;
    return true;
  }

  skipSpace(): void {
    SPACE.lastIndex = this.pos;
    SPACE.exec(this.text);
    this.pos = SPACE.lastIndex;
  }

  fail(message: string): never {
    throw new MatcherError(`matcher ${JSON.stringify(this.text)}: ${message} (column ${this.pos + 1})`, this.pos + 1);
  }

  matcher(): Matcher {
    this.skipSpace();
    NAME.lastIndex = this.pos;
    const m = NAME.exec(this.text);
    if (!m) this.fail('expected a label name');
    const name = m[0];
    this.pos = NAME.lastIndex;
    this.skipSpace();
    let type: MatchType;
    if (this.eat('=~')) type = '=~';
    else if (this.eat('!~')) type = '!~';
    else if (this.eat('!=')) type = '!=';
    else if (this.eat('=')) type = '=';
    else this.fail('expected one of =, !=, =~, !~ after the label name');
    this.skipSpace();
    const value = this.peek('"') ? this.quoted() : this.bare();
    try {
      return makeMatcher(name, type, value);
    } catch (err) {
      this.fail((err as Error).message);
    }
  }

  private quoted(): string {
    this.pos++; // opening quote
    let out = '';
    while (!this.atEnd()) {
      const c = this.text[this.pos] ?? '';
      if (c === '"') {
        this.pos++;
        return out;
      }
      if (c === '\\') {
        const next = this.text[this.pos + 1];
        if (next === undefined) break;
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
        this.pos += 2;
        continue;
      }
      out += c;
      this.pos++;
    }
    this.fail('unterminated quoted value');
  }

  private bare(): string {
    // Alertmanager's classic parser accepts unquoted values; they end at a comma or closing brace.
    const start = this.pos;
    while (!this.atEnd() && !this.peek(',') && !this.peek('}')) this.pos++;
    const value = this.text.slice(start, this.pos).trim();
    if (value.includes('"')) {
      this.pos = start;
      this.fail('a value containing " must be quoted');
    }
    return value;
  }
}

/** Whether one matcher accepts the labels (an absent label counts as ""). */
export function matcherMatches(matcher: Matcher, labels: Labels): boolean {
  const value = labels[matcher.name] ?? '';
  switch (matcher.type) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
    case '!~': {
      const re = matcher.regex ?? compileLinearRegex(matcher.value);
      return re.matches(value) === (matcher.type === '=~');
    }
  }
}

/** Whether every matcher accepts the labels (an empty list accepts everything). */
export function matchesAll(matchers: readonly Matcher[], labels: Labels): boolean {
  return matchers.every((m) => matcherMatches(m, labels));
}

/** Canonical text of a matcher, e.g. `severity="critical"`; parseMatcher(formatMatcher(m)) equals m. */
export function formatMatcher(m: Matcher): string {
  return `${m.name}${m.type}${JSON.stringify(m.value)}`;
}
