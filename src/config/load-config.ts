import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Document, Node, ScalarTag } from 'yaml';
import { LineCounter, isScalar, parseDocument, visit } from 'yaml';
import { errorMessage } from '../util/errors.js';
import { redactSecrets } from '../util/redact.js';
import { ConfigError, ConfigReadError } from '../base/config-error.js';
import type { EnvReference } from './env-substitution.js';
import { expandEnvReferences, maskEnvReferences } from './env-substitution.js';
import type { Problem } from '../base/problem.js';
import { checkReferences, referenceViewOf } from './reference-checks.js';
import { resolveConfigPaths } from './resolve-paths.js';
import type { Config } from './schema.js';
import { configSchema } from './schema.js';
import { collectSecrets, resolveSecretFiles } from './secret-files.js';
import { isRecord, setValueAt } from '../base/value-path.js';
import { YamlLocator } from '../base/yaml-locator.js';
import { issuesToProblems } from '../base/zod-problems.js';
import { regionalHolidaysWarning } from '../sla/regional-holidays.js';

export interface LoadedConfig {
  config: Config;
  /** The config file as given by the caller (used in problem messages). */
  file: string;
  /** Absolute folder of the config file; relative paths in the config were resolved against it. */
  dir: string;
  /** Every secret value found, so callers can redact them from logs and errors. */
  secrets: string[];
  /** With allowMissingEnv: the unset variables whose values were not checked. */
  missingEnv?: string[];
  /** With allowMissingEnv: each unset variable at its first use without a default, for `check` to warn there. */
  unsetVariables?: Problem[];
  /** What does not stop the daemon but may not be what the config means, for `check` to warn of (a calendar that leaves regional holidays out). */
  warnings?: Problem[];
}

export interface ParseConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder for relative paths; defaults to the folder of `file`. */
  dir?: string;
  /** Reads `*_file` secrets; defaults to the file system. */
  readSecretFile?: (path: string) => string;
  /**
   * `check --allow-missing-env`: an unset `${VAR}` is not a problem; the values it fills are not checked, and
   * the variables are listed in `missingEnv` (a config linted in CI without the deployment's secrets).
   */
  allowMissingEnv?: boolean;
}

/** The placeholder of an unset variable under allowMissingEnv: a URL, so URL fields parse; never checked. */
const UNSET_HOST = 'unset.invalid';

/** Reads, substitutes, validates and normalises a config file. Throws ConfigError with every problem found. */
export async function loadConfig(file: string, options: { env?: NodeJS.ProcessEnv; allowMissingEnv?: boolean } = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = isRecord(err) && typeof err.code === 'string' ? err.code : 'unreadable';
    throw new ConfigReadError(`cannot read config file "${file}" (${code})`, { cause: err });
  }
  return parseConfigText(text, file, { env: options.env ?? process.env, ...(options.allowMissingEnv ? { allowMissingEnv: true } : {}) });
}

/** Everything `loadConfig` does after reading the file; touches the disk only for `*_file` secrets. */
export function parseConfigText(text: string, file: string, options: ParseConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const dir = options.dir ?? dirname(resolve(file));
  const lineCounter = new LineCounter();
  const { masked, references } = maskEnvReferences(text);
  // `merge`: YAML 1.1 merge keys (`<<: *common`), which Go-based tools such as Prometheus also accept.
  const doc = parseDocument(masked, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const locator = new YamlLocator(doc, lineCounter, file);

  // Later stages would only report noise about a document whose structure is unknown.
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => locator.problemAtOffset(e.pos[0], yamlMessage(e.message))));
  }

  const problems: Problem[] = [];
  const missingEnv = new Set<string>();
  const placeholder = options.allowMissingEnv
    ? (name: string): string => {
        missingEnv.add(name);
        return `http://${UNSET_HOST}/${name}`;
      }
    : undefined;
  const failedNodes = expandInDocument(doc, references, env, locator, problems, placeholder);
  const unsetVariables = unsetVariableUses(missingEnv, references, locator);

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 }) ?? {};
  } catch (err) {
    // Alias bombs ("billion laughs") are refused by the YAML library rather than expanded.
    throw new ConfigError([locator.problemAtOffset(0, `invalid YAML: ${errorMessage(err)}`)]);
  }
  const secretFiles = resolveSecretFiles(data, { dir, locator, readFile: options.readSecretFile });
  problems.push(...secretFiles.problems);

  const parsed = validate(doc, data);
  const secrets = collectSecrets(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.filter((issue) => {
      const node = locator.nodeAt(issue.path);
      return !(node && failedNodes.has(node));
    });
    problems.push(
      ...issuesToProblems(issues, {
        schema: configSchema,
        data,
        locator,
        movedFrom: secretFiles.movedFrom,
        reported: secretFiles.reported,
      }),
    );
  }
  // References are checked whatever else is wrong (all problems in one run), on the raw data when the schema
  // was not met; a reference the schema already refused at the same place is not reported twice.
  const taken = new Set(problems.map((p) => `${p.line}:${p.col}`));
  for (const issue of checkReferences(parsed.success ? parsed.data : referenceViewOf(data))) {
    const problem = locator.problemAt(issue.path, issue.message);
    if (!taken.has(`${problem.line}:${problem.col}`)) problems.push(problem);
  }
  if (!parsed.success && problems.length === 0 && missingEnv.size > 0) {
    // Only values filled by unset variables were wrong (a number, say): say which, rather than nothing.
    problems.push(locator.problemAtOffset(0, `values filled by unset variables could not be checked: ${[...missingEnv].sort().join(', ')}`));
  }
  if (problems.length > 0 || !parsed.success) {
    // Problems are listed in file order, with secrets scrubbed from every message whatever its origin.
    const sorted = problems
      .map((p) => ({ ...p, message: redactSecrets(p.message, secrets) }))
      .sort((a, b) => a.line - b.line || a.col - b.col);
    const error = new ConfigError(sorted);
    error.partial = { ...partialOf(data, dir), unsetVariables };
    throw error;
  }
  // A calendar of a country with regional holidays, without a region (contract 11c): the days it leaves out.
  const warnings: Problem[] = [];
  const year = new Date().getUTCFullYear();
  for (const [name, calendar] of Object.entries(parsed.data.calendars)) {
    const warning = regionalHolidaysWarning(`calendar "${name}"`, calendar, year);
    if (warning !== undefined) warnings.push(locator.problemAt(['calendars', name, 'holidays', 'country'], warning));
  }
  return { config: resolveConfigPaths(parsed.data, dir), file, dir, secrets, missingEnv: [...missingEnv].sort(), unsetVariables, warnings };
}

/** Each unset variable (allowMissingEnv) at its first `${NAME}` without a default, in file order. */
function unsetVariableUses(names: ReadonlySet<string>, references: readonly EnvReference[], locator: YamlLocator): Problem[] {
  const uses: Problem[] = [];
  const found = new Set<string>();
  for (const reference of references) {
    const name = reference.text.slice(2, -1);
    if (!names.has(name) || found.has(name)) continue;
    found.add(name);
    uses.push(locator.problemAtOffset(reference.offset, `environment variable ${name} is not set: run refuses to start without it, and the values it fills were not checked`));
  }
  return uses;
}

/**
 * A plain scalar written where a string is expected (`password: 0123`, `username: 12345`, or
 * `password: ${PW}` with a numeric PW) is taken as written, as Go YAML loaders do for string fields.
 * Retried because each pass can reveal issues deeper in objects that were rejected as a whole.
 */
function validate(doc: Document, data: unknown): ReturnType<typeof configSchema.safeParse> {
  let parsed = configSchema.safeParse(data);
  for (let pass = 0; pass < 5 && !parsed.success; pass++) {
    let changed = false;
    for (const issue of parsed.error.issues) {
      if (issue.code !== 'invalid_type' || issue.expected !== 'string') continue;
      const node = doc.getIn(issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)), true);
      if (!isScalar(node) || node.type !== 'PLAIN' || node.tag || typeof node.source !== 'string') continue;
      if (typeof node.value !== 'number' && typeof node.value !== 'boolean' && typeof node.value !== 'bigint') continue;
      if (setValueAt(data, issue.path, node.source)) changed = true;
    }
    if (!changed) break;
    parsed = configSchema.safeParse(data);
  }
  return parsed;
}

/**
 * Expands `${VAR}` inside each scalar (see env-substitution.ts for why this happens after parsing).
 * A plain scalar is then resolved again, so `port: ${SMTP_PORT}` is a number; a quoted one stays a
 * string. Returns the nodes whose expansion failed, whose validation errors would only repeat it.
 */
function expandInDocument(
  doc: Document,
  references: readonly EnvReference[],
  env: NodeJS.ProcessEnv,
  locator: YamlLocator,
  problems: Problem[],
  placeholder?: (name: string) => string,
): Set<Node> {
  const failed = new Set<Node>();
  const unsetReported = new Set<string>();
  visit(doc, {
    Scalar(key, node) {
      const source = typeof node.source === 'string' ? node.source : typeof node.value === 'string' ? node.value : undefined;
      if (source === undefined) return;
      const [start, end] = node.range ?? [0, 0];
      const inside = references.filter((r) => r.offset >= start && r.offset < end);
      const result = expandEnvReferences(source, inside, env, placeholder);
      if (!result.changed) return;
      if (result.errors.length > 0) {
        failed.add(node);
        for (const error of result.errors) {
          // An unset variable used in several places is one problem, at its first use.
          if (error.unset !== undefined) {
            if (unsetReported.has(error.unset)) continue;
            unsetReported.add(error.unset);
          }
          problems.push(locator.problemAtOffset(inside[error.reference]?.offset ?? start, error.message));
        }
        node.value = '';
        return;
      }
      // A value filled from a placeholder (check --allow-missing-env) is not checked.
      if (result.text.includes(`//${UNSET_HOST}/`)) failed.add(node);
      node.source = result.text;
      node.value = key !== 'key' && node.type === 'PLAIN' && !node.tag ? resolvePlain(doc, result.text) : result.text;
    },
  });
  return failed;
}

/**
 * The rule files (and web config, and calendar names) an invalid config names, when it names them readably: `check`
 * goes on with them, so a rule's unknown calendar is reported in the same run as the config's own problems.
 */
function partialOf(data: unknown, dir: string): { ruleFiles: string[]; dir: string; webConfigFile?: string; calendars?: string[] } {
  const record = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const files = Array.isArray(record.rule_files) ? record.rule_files.filter((f): f is string => typeof f === 'string' && f !== '') : [];
  const abs = (p: string): string => (isAbsolute(p) ? p : join(dir, p));
  const server = typeof record.server === 'object' && record.server !== null ? (record.server as Record<string, unknown>) : {};
  const web = typeof server.web_config_file === 'string' ? server.web_config_file : undefined;
  const calendars = record.calendars;
  const calendarNames = calendars === undefined || calendars === null ? [] : typeof calendars === 'object' && !Array.isArray(calendars) ? Object.keys(calendars) : undefined;
  return { ruleFiles: files.map(abs), dir, ...(web ? { webConfigFile: abs(web) } : {}), ...(calendarNames ? { calendars: calendarNames } : {}) };
}

/** As the YAML composer resolves an untagged plain scalar (core schema: null, bool, int, float, else string). */
function resolvePlain(doc: Document, text: string): unknown {
  const tag = doc.schema.tags.find((t): t is ScalarTag => !t.collection && t.default === true && t.test?.test(text) === true);
  if (!tag) return text;
  try {
    // Some tags (bool) resolve to a Scalar node rather than a bare value.
    const resolved: unknown = tag.resolve(text, () => undefined, {});
    return isScalar(resolved) ? resolved.value : resolved;
  } catch {
    return text;
  }
}

function yamlMessage(message: string): string {
  // The parser quotes the offending source text (`...in YAML stream: "hunter2"`), which may be a secret;
  // the position already says where it is.
  return `invalid YAML: ${message.replace(/\s+at line \d+, column \d+.*$/s, '').replace(/: ".*"$/s, '')}`;
}
