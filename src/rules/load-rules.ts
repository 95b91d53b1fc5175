import { nearestKey } from '../base/nearest-key.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import type { Problem } from '../base/problem.js';
import { SOURCE_DOWN_ALERTNAME } from '../alerts/source-down.js';
import { errorMessage } from '../util/errors.js';
import { findRuleType, RULE_TYPES, ruleTypeNames, type RuleDefinition } from './registry.js';
import { checkRuleTemplates } from './rule-schema.js';
import { parseYamlWithPositions, problemAt, type PositionedYaml } from './yaml-positions.js';
import { plainMessage } from '../base/zod-problems.js';
import { formatDuration } from '../base/duration.js';
import { lateUntilCut } from './missing-file.js';
import { regionalHolidaysWarning } from '../sla/regional-holidays.js';

export interface LoadedRules {
  rules: RuleDefinition[];
  /** Files read, in load order (absolute paths). */
  files: string[];
  problems: Problem[];
  /** What does not stop a rule but is not what it says (a configured late_until that is cut). */
  warnings: Problem[];
}

const SKIP_DIRS = new Set(['node_modules', '.git']);
const MAX_DEPTH = 12;

/** Files under `dir` (recursively), as absolute paths. */
async function walk(dir: string, depth = 0): Promise<string[]> {
  if (depth > MAX_DEPTH) return [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) out.push(...(await walk(full, depth + 1)));
    } else if (e.isFile()) {
      out.push(full);
    }
  }
  return out;
}

/**
 * Expand `rule_files` patterns (globs relative to `baseDir`) into files, sorted and without repeats.
 * A pattern that matches nothing is not an error (as in Prometheus): a rules folder may be empty.
 */
export async function expandRuleFilePatterns(patterns: readonly string[], baseDir: string): Promise<string[]> {
  const found = new Set<string>();
  for (const pattern of patterns) {
    const absolute = path.resolve(baseDir, pattern).split(path.sep).join('/');
    const scan = picomatch.scan(absolute);
    if (!scan.isGlob) {
      const exists = await stat(absolute).then((s) => s.isFile(), () => false);
      if (exists) found.add(path.normalize(absolute));
      continue;
    }
    const isMatch = picomatch(absolute, { dot: false });
    const files = await walk(scan.base || '/');
    for (const f of files.sort()) if (isMatch(f.split(path.sep).join('/'))) found.add(f);
  }
  return [...found];
}

function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] as number;
}

/** Keys allowed in the object schema at `at` (zod's own structure, unwrapping defaults and optionals). */
function allowedKeys(schema: z.ZodType, at: readonly PropertyKey[]): string[] {
  let s: unknown = schema;
  const unwrap = () => {
    for (let i = 0; i < 10; i++) {
      if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodPrefault || s instanceof z.ZodNullable) s = s.unwrap();
      else if (s instanceof z.ZodPipe) s = s.in;
      else return;
    }
  };
  unwrap();
  for (const step of at) {
    if (s instanceof z.ZodObject && typeof step === 'string') s = (s.shape as Record<string, unknown>)[step];
    else if (s instanceof z.ZodArray) s = s.element;
    else return [];
    unwrap();
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

function nearest(key: string, candidates: readonly string[]): string | undefined {
  let best: { key: string; d: number } | undefined;
  for (const c of candidates) {
    const d = levenshtein(key.toLowerCase(), c.toLowerCase());
    if (d <= Math.max(2, Math.floor(c.length / 3)) && (!best || d < best.d)) best = { key: c, d };
  }
  return best?.key;
}

export function issueProblems(y: PositionedYaml, base: (string | number)[], issues: readonly z.core.$ZodIssue[], schema: z.ZodType): Problem[] {
  const out: Problem[] = [];
  for (const issue of issues) {
    const at = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (issue.code === 'unrecognized_keys') {
      const known = allowedKeys(schema, at);
      for (const key of issue.keys) {
        const hint = nearest(key, known);
        const message = `unknown key "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}`;
        out.push(problemAt(y, [...base, ...at], message, key));
      }
    } else if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message) && at.length > 0) {
      // Point at the map that lacks the key, and say so in words.
      out.push(problemAt(y, [...base, ...at.slice(0, -1)], `missing required key "${String(at.at(-1))}"`));
    } else {
      const field = at.length > 0 ? `${at.join('.')}: ` : '';
      out.push(problemAt(y, [...base, ...at], `${field}${plainMessage(issue.message)}`));
    }
  }
  return out;
}

const fileSchema = z.strictObject({ rules: z.array(z.unknown()).default([]) });

/** Parse one rule file's text into rules and problems (positions point into this file). */
export function parseRuleFile(
  file: string,
  text: string,
  opts: { calendars?: ReadonlySet<string> } = {},
): { rules: RuleDefinition[]; problems: Problem[]; positions: Map<RuleDefinition, Problem>; warnings: Problem[] } {
  const y = parseYamlWithPositions(file, text);
  const rules: RuleDefinition[] = [];
  const positions = new Map<RuleDefinition, Problem>();
  const warnings: Problem[] = [];
  if (y.problems.length > 0) return { rules, problems: y.problems, positions, warnings };
  const raw: unknown = y.doc.toJS() ?? {};
  const top = fileSchema.safeParse(raw);
  if (!top.success) return { rules, problems: issueProblems(y, [], top.error.issues, fileSchema), positions, warnings };
  const problems: Problem[] = [];
  top.data.rules.forEach((item, i) => {
    const type = typeof item === 'object' && item !== null && 'type' in item ? item.type : undefined;
    const ruleType = typeof type === 'string' ? findRuleType(type) : undefined;
    if (!ruleType) {
      const message =
        type === undefined
          ? `rule has no "type" (one of: ${ruleTypeNames().join(', ')})`
          : `unknown rule type "${String(type)}" (known: ${ruleTypeNames().join(', ')})`;
      problems.push(problemAt(y, type === undefined ? ['rules', i] : ['rules', i, 'type'], message));
      return;
    }
    // Each problem names its rule: "threshold: expected a number" alone does not say which of 40 rules.
    const name = typeof item === 'object' && item !== null && 'name' in item && typeof item.name === 'string' ? `rule "${item.name}"` : `rules[${i}]`;
    // The calendar is checked on what was written, beside the schema's problems: one run of `check` lists both.
    const calendarProblem = unknownCalendar(y, i, item, name, opts.calendars);
    if (calendarProblem) problems.push(calendarProblem);
    // Parse through the registry's own tuple so the result keeps its precise type.
    const parsed = RULE_TYPES.find((t) => t.type === ruleType.type)?.schema.safeParse(item);
    if (!parsed) return;
    if (!parsed.success) {
      problems.push(...issueProblems(y, ['rules', i], parsed.error.issues, ruleType.schema).map((p) => ({ ...p, message: `${name}: ${p.message}` })));
      return;
    }
    if (calendarProblem) return;
    if (parsed.data.name === SOURCE_DOWN_ALERTNAME) {
      problems.push(problemAt(y, ['rules', i, 'name'], `name: "${SOURCE_DOWN_ALERTNAME}" is the built-in source alert; choose another name`));
      return;
    }
    const templateIssues = checkRuleTemplates(parsed.data, ruleType.templateVariables, ruleType.extraTemplates(parsed.data));
    if (templateIssues.length > 0) {
      for (const issue of templateIssues) problems.push(problemAt(y, ['rules', i, ...issue.path], `rule "${parsed.data.name}": ${issue.path.join('.')}: ${issue.message}`));
      return;
    }
    rules.push(parsed.data);
    positions.set(parsed.data, problemAt(y, ['rules', i, 'name'], ''));
    const rule = parsed.data;
    if (rule.type === 'missing_file' && 'window' in rule) {
      if (typeof rule.calendar !== 'string') {
        const regional = regionalHolidaysWarning(`rule "${rule.name}": its calendar`, rule.calendar, new Date().getUTCFullYear());
        if (regional !== undefined) warnings.push(problemAt(y, ['rules', i, 'calendar', 'holidays', 'country'], regional));
      }
      const cut = lateUntilCut(rule, Date.now());
      if (cut !== undefined) {
        warnings.push(
          problemAt(
            y,
            ['rules', i, 'sla', 'late_until'],
            `rule "${rule.name}": sla.late_until ${formatDuration(rule.sla?.late_until ?? 0)} is cut to ${formatDuration(cut)}: an occurrence closes when the key's next window opens, so one file is evidence of one deadline only (contract 11c)`,
          ),
        );
      }
    }
  });
  return { rules, problems, positions, warnings };
}

/** A rule's `calendar:` that names no calendar of the config, pointed at its own line. */
function unknownCalendar(y: PositionedYaml, i: number, item: unknown, name: string, calendars: ReadonlySet<string> | undefined): Problem | undefined {
  if (!calendars || typeof item !== 'object' || item === null || !('calendar' in item)) return undefined;
  const calendar = item.calendar;
  if (typeof calendar !== 'string' || calendars.has(calendar)) return undefined;
  const known = [...calendars];
  const hint = nearestKey(calendar, known);
  return problemAt(
    y,
    ['rules', i, 'calendar'],
    `${name}: calendar: unknown calendar "${calendar}"${hint ? ` (did you mean "${hint}"?)` : ''}; the config's calendars: ${known.length > 0 ? known.join(', ') : 'none'}`,
  );
}

/**
 * Load every rule file the patterns name. Problems (syntax, schema, unknown type, duplicate names) are
 * collected as FILE:LINE:COL, never thrown, so `check` lists them all; rules with problems are left out.
 */
export async function loadRuleFiles(patterns: string[], baseDir: string, opts: { calendars?: ReadonlySet<string>; configFile?: string } = {}): Promise<LoadedRules> {
  const rules: RuleDefinition[] = [];
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  // Each pattern expanded once: its files join the others' (in order, without repeats), and a pattern that matches
  // nothing is said — it would load no rule without a word: a typo in a path, or rules not deployed (issue 52).
  const found = new Set<string>();
  for (const pattern of patterns) {
    const matched = await expandRuleFilePatterns([pattern], baseDir);
    for (const f of matched) found.add(f);
    if (matched.length === 0) {
      warnings.push({ file: opts.configFile ?? path.resolve(baseDir, pattern), line: 1, col: 1, message: `rule_files: "${pattern}" matches no file (resolved from ${baseDir}): no rule is loaded from it` });
    }
  }
  const files = [...found];
  const firstByName = new Map<string, Problem>();
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      problems.push({ file, line: 1, col: 1, message: `cannot read rule file: ${errorMessage(err)}` });
      continue;
    }
    const parsed = parseRuleFile(file, text, opts);
    problems.push(...parsed.problems);
    warnings.push(...parsed.warnings);
    for (const rule of parsed.rules) {
      const at = parsed.positions.get(rule) ?? { file, line: 1, col: 1, message: '' };
      const first = firstByName.get(rule.name);
      if (first) {
        problems.push({ ...at, message: `duplicate rule name "${rule.name}" (first defined at ${first.file}:${first.line}:${first.col})` });
        continue;
      }
      firstByName.set(rule.name, at);
      rules.push(rule);
    }
  }
  return { rules, files, problems, warnings };
}
