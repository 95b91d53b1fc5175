/**
 * `${VAR}`, `${VAR:-default}` and `$$` (contract section 2), in two steps around YAML parsing:
 *
 * 1. `maskEnvReferences` replaces each `${...}` in the raw file with a placeholder of exactly the same
 *    length made of private-use characters. YAML then parses the file's own structure: a reference
 *    inside a flow map (`{ url: ${URL} }`) does not open a nested map, and line:col positions stay
 *    those of the original file because no length changes.
 * 2. `expandEnvReferences` puts the values in, scalar by scalar, after parsing. A value such as
 *    `a: #b"'` therefore stays one string and can never become a comment, a key or a broken quote; a
 *    reference inside a comment is never evaluated.
 *
 * `:-` follows the shell: the default applies when the variable is unset or empty. `$$` is a literal
 * `$`; a `$` followed by anything else is kept as it is.
 */
export interface EnvReference {
  /** Offset of the `$` in the original text. */
  offset: number;
  /** The reference as written, e.g. `${MFT_PASSWORD:-x}`. */
  text: string;
}

export interface ExpansionError {
  /** Index into the references given to `expandEnvReferences`, or -1 for an unterminated `${`. */
  reference: number;
  message: string;
  /** The variable, when the problem is that it is not set (reported once per variable). */
  unset?: string;
}

export interface ExpansionResult {
  text: string;
  /** True when the value contained a reference or `$$`, so the caller knows to re-resolve it. */
  changed: boolean;
  errors: ExpansionError[];
}

// Private-use code points are valid in every YAML scalar style and never special to the YAML grammar.
// A config file that itself contains them would confuse the mapping; no real config does.
const START = '\uE000';
const FILL = '\uE001';
const PLACEHOLDER = /\uE000\uE001*/y;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Step 1: the text with every `${...}` masked, and the references in file order. */
export function maskEnvReferences(text: string): { masked: string; references: EnvReference[] } {
  const references: EnvReference[] = [];
  let masked = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch !== '$') {
      masked += ch;
      i += 1;
    } else if (text[i + 1] === '$') {
      masked += '$$';
      i += 2;
    } else if (text[i + 1] === '{') {
      const close = findClose(text, i + 2);
      if (close < 0) {
        masked += ch;
        i += 1;
        continue;
      }
      const reference = text.slice(i, close + 1);
      references.push({ offset: i, text: reference });
      masked += START + FILL.repeat(reference.length - 1);
      i = close + 1;
    } else {
      masked += ch;
      i += 1;
    }
  }
  return { masked, references };
}

/**
 * Step 2: expand one parsed scalar. `references` are those inside the scalar's source range, in order;
 * the n-th placeholder in `value` stands for the n-th of them.
 */
export function expandEnvReferences(
  value: string,
  references: readonly EnvReference[],
  env: NodeJS.ProcessEnv,
  /** For an unset variable without a default: a stand-in value instead of an error (check --allow-missing-env). */
  placeholder?: (name: string) => string,
): ExpansionResult {
  if (!value.includes('$') && !value.includes(START)) return { text: value, changed: false, errors: [] };
  const errors: ExpansionError[] = [];
  let out = '';
  let changed = false;
  let next = 0;
  let i = 0;
  while (i < value.length) {
    const ch = value[i];
    if (ch === START) {
      PLACEHOLDER.lastIndex = i;
      PLACEHOLDER.exec(value);
      i = PLACEHOLDER.lastIndex;
      changed = true;
      const index = next++;
      const reference = references[index];
      if (reference === undefined) {
        errors.push({ reference: -1, message: 'internal error: variable reference could not be located' });
        continue;
      }
      const resolved = resolveReference(reference.text, env, placeholder);
      if (typeof resolved === 'string') out += resolved;
      else errors.push({ reference: index, message: resolved.error, ...(resolved.unset !== undefined ? { unset: resolved.unset } : {}) });
    } else if (ch === '$' && value[i + 1] === '$') {
      out += '$';
      changed = true;
      i += 2;
    } else if (ch === '$' && value[i + 1] === '{') {
      // Masking skipped it, so it has no closing brace on its line.
      errors.push({ reference: -1, message: `unterminated variable reference "${value.slice(i, i + 20)}" (use $$ for a literal $)` });
      changed = true;
      i += 2;
    } else {
      out += ch;
      i += 1;
    }
  }
  return { text: out, changed, errors };
}

/** Both steps on a single string (no YAML around it). */
export function substituteEnv(input: string, env: NodeJS.ProcessEnv): ExpansionResult {
  const { masked, references } = maskEnvReferences(input);
  return expandEnvReferences(masked, references, env);
}

function resolveReference(reference: string, env: NodeJS.ProcessEnv, placeholder?: (name: string) => string): string | { error: string; unset?: string } {
  const body = reference.slice(2, -1);
  const sep = body.indexOf(':-');
  const name = sep >= 0 ? body.slice(0, sep) : body;
  const fallback = sep >= 0 ? body.slice(sep + 2) : undefined;
  if (!VAR_NAME.test(name)) {
    return { error: `invalid variable reference "${reference}" (use \${NAME} or \${NAME:-default}; $$ for a literal $)` };
  }
  const value = env[name];
  if (fallback !== undefined && (value === undefined || value === '')) return fallback;
  if (value !== undefined) return value;
  if (placeholder) return placeholder(name);
  return { error: `environment variable ${name} is not set (use \${${name}:-default} to give a default)`, unset: name };
}

/** The `}` closing a reference that starts at `from`, on the same line; -1 when there is none. */
function findClose(text: string, from: number): number {
  for (let j = from; j < text.length; j++) {
    const c = text[j];
    if (c === '}') return j;
    if (c === '\n' || c === '\r') return -1;
  }
  return -1;
}
