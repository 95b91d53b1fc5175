import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

/**
 * Reads every PromQL expression out of the Grafana dashboard and the Prometheus rules file, and finds the
 * metric names an expression references, so tests can hold both to the metrics the daemon really exposes.
 */

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const DASHBOARD_FILE = join(REPO_ROOT, 'grafana/transfer-watch.json');
export const RULES_FILE = join(REPO_ROOT, 'prometheus/transfer-watch.rules.yaml');
export const RULES_TEST_DIR = join(REPO_ROOT, 'prometheus/tests');

export interface PromqlExpression {
  /** Where it came from, for messages: `dashboard: <panel title> [A]` or `rules: <alert>`. */
  origin: string;
  expr: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function loadDashboard(): Record<string, unknown> {
  const parsed: unknown = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
  if (!isRecord(parsed)) throw new Error('dashboard is not a JSON object');
  return parsed;
}

/** Panels, including those nested in collapsed rows. */
export function dashboardPanels(dashboard: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const p of arrayOf(dashboard['panels'])) {
    if (!isRecord(p)) continue;
    out.push(p);
    for (const nested of arrayOf(p['panels'])) if (isRecord(nested)) out.push(nested);
  }
  return out;
}

export function dashboardVariables(dashboard: Record<string, unknown>): Record<string, unknown>[] {
  const templating = dashboard['templating'];
  return isRecord(templating) ? arrayOf(templating['list']).filter(isRecord) : [];
}

/** Every panel target's `expr`. */
export function dashboardExpressions(): PromqlExpression[] {
  const out: PromqlExpression[] = [];
  for (const panel of dashboardPanels(loadDashboard())) {
    for (const target of arrayOf(panel['targets'])) {
      if (isRecord(target) && typeof target['expr'] === 'string') {
        out.push({ origin: `dashboard: ${String(panel['title'])} [${String(target['refId'])}]`, expr: target['expr'] });
      }
    }
  }
  return out;
}

/** The selectors inside the `label_values(...)` queries of the template variables, as expressions. */
export function dashboardVariableSelectors(): PromqlExpression[] {
  const out: PromqlExpression[] = [];
  for (const v of dashboardVariables(loadDashboard())) {
    if (v['type'] !== 'query' || typeof v['definition'] !== 'string') continue;
    const m = /^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$/.exec(v['definition']);
    if (m?.[1]) out.push({ origin: `dashboard variable ${String(v['name'])}`, expr: m[1] });
  }
  return out;
}

export function rulesExpressions(): PromqlExpression[] {
  const parsed: unknown = parseYaml(readFileSync(RULES_FILE, 'utf8'));
  const out: PromqlExpression[] = [];
  if (!isRecord(parsed)) return out;
  for (const group of arrayOf(parsed['groups'])) {
    if (!isRecord(group)) continue;
    for (const rule of arrayOf(group['rules'])) {
      if (isRecord(rule) && typeof rule['expr'] === 'string') {
        out.push({ origin: `rules: ${String(rule['alert'] ?? rule['record'])}`, expr: rule['expr'] });
      }
    }
  }
  return out;
}

/** Grafana's variables replaced by values Prometheus accepts (all sources and instances, fixed ranges). */
export function substituteGrafanaVariables(expr: string, range = '5m'): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__interval', '15s')
    .replaceAll('$__range', range)
    .replaceAll('$source', '.*')
    .replaceAll('$mft_instance', '.*');
}

const KEYWORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan',
]);

/** Metric names an expression selects: identifiers outside strings, label matchers, ranges and groupings, that are not function calls. */
export function referencedMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![a-zA-Z0-9_:]|\s*\()/g)) {
    const name = m[1];
    if (name && !KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names];
}
