import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { DEFAULT_METRIC_PREFIXES, allExposedSeriesNames } from '../../src/metrics/metric-names.js';
import {
  RULES_FILE,
  RULES_TEST_DIR,
  dashboardExpressions,
  dashboardPanels,
  dashboardVariableSelectors,
  dashboardVariables,
  loadDashboard,
  referencedMetricNames,
  rulesExpressions,
  substituteGrafanaVariables,
} from './promql-expressions.js';
import { requireBinary, runBinary } from './promtool.js';

/** Series Prometheus itself attaches to every target. */
const PROMETHEUS_BUILTINS = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped', 'scrape_series_added']);

function isKnownMetric(name: string): boolean {
  return (
    allExposedSeriesNames().includes(name) ||
    PROMETHEUS_BUILTINS.has(name) ||
    DEFAULT_METRIC_PREFIXES.some((prefix) => name.startsWith(prefix))
  );
}

const allExpressions = [...dashboardExpressions(), ...dashboardVariableSelectors(), ...rulesExpressions()];

describe('metric names in the dashboard and the rules', () => {
  it('finds the metric names an expression references, and only those', () => {
    expect(
      referencedMetricNames(
        'histogram_quantile(0.9, sum by (le, source) (rate(foo_bucket{source=~"$source", a="b c"}[$__rate_interval]))) / on(x) bar_total or vector(0)',
      ).sort(),
    ).toEqual(['bar_total', 'foo_bucket']);
    expect(referencedMetricNames('time() - max by (source) (mft_last_transfer_timestamp_seconds)')).toEqual([
      'mft_last_transfer_timestamp_seconds',
    ]);
  });

  it('has expressions to check', () => {
    expect(dashboardExpressions().length).toBeGreaterThan(15);
    expect(rulesExpressions().length).toBeGreaterThanOrEqual(4);
  });

  it('references only metrics the metrics module defines (plus Prometheus built-ins)', () => {
    const unknown = allExpressions.flatMap(({ origin, expr }) =>
      referencedMetricNames(expr)
        .filter((name) => !isKnownMetric(name))
        .map((name) => `${origin}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('would catch a misspelt metric name', () => {
    expect(referencedMetricNames('rate(mft_transfer_total[5m])').filter((n) => !isKnownMetric(n))).toEqual([
      'mft_transfer_total',
    ]);
  });
});

describe('Grafana dashboard', () => {
  const dashboard = loadDashboard();
  const panels = dashboardPanels(dashboard);

  it('has a Prometheus datasource variable that every panel and query uses', () => {
    const variables = dashboardVariables(dashboard);
    const ds = variables.find((v) => v['name'] === 'datasource');
    expect(ds).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const panel of panels.filter((p) => p['type'] !== 'row')) {
      expect(panel['datasource'], String(panel['title'])).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
    for (const v of variables.filter((x) => x['type'] === 'query')) {
      expect(v['datasource'], String(v['name'])).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('has source and mft_instance variables from label_values', () => {
    const variables = dashboardVariables(dashboard);
    const source = variables.find((v) => v['name'] === 'source');
    const instance = variables.find((v) => v['name'] === 'mft_instance');
    expect(source).toMatchObject({ type: 'query', definition: 'label_values(transfer_watch_source_up, source)' });
    expect(instance).toMatchObject({ type: 'query', includeAll: true, allValue: '.*' });
    expect(String(instance?.['definition'])).toMatch(/^label_values\(mft_transfers_total\{source=~"\$source"\}, mft_instance\)$/);
  });

  it('has the panels operators need', () => {
    const exprs = dashboardExpressions().map((e) => e.expr);
    const has = (re: RegExp): boolean => exprs.some((e) => re.test(e));
    expect(has(/sum by \(source, mft_instance, event\) \(rate\(mft_transfers_total/)).toBe(true);
    expect(has(/mft_transfers_total\{[^}]*result="error"/)).toBe(true);
    expect(has(/result="error".*\/.*mft_transfers_total/)).toBe(true); // error ratio
    expect(has(/topk\(\d+, sum by \(code\) \(increase\(mft_transfer_errors_total/)).toBe(true);
    expect(has(/mft_transfer_bytes_total/)).toBe(true);
    expect(has(/time\(\) - max by \(source, mft_instance\) \(mft_last_transfer_timestamp_seconds/)).toBe(true);
    expect(has(/transfer_watch_data_lag_seconds/)).toBe(true);
    expect(has(/transfer_watch_source_up/)).toBe(true);
    for (const q of ['0.5', '0.9', '0.99']) {
      expect(has(new RegExp(`histogram_quantile\\(${q.replace('.', '\\.')}, .*transfer_watch_poll_duration_seconds_bucket`))).toBe(true);
    }
    expect(has(/transfer_watch_alerts\{state="firing"\}/)).toBe(true);
    expect(has(/transfer_watch_notifications_total\{outcome="failed"\}/)).toBe(true);
  });

  it('has unique panel ids, a stable uid and a Grafana 10 schema', () => {
    const ids = panels.map((p) => p['id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard['uid']).toBe('transfer-watch');
    expect(Number(dashboard['schemaVersion'])).toBeGreaterThanOrEqual(36);
    expect(dashboard['id']).toBeNull();
  });
});

describe('promtool on the rules file and the dashboard expressions', () => {
  const promtool = requireBinary('promtool');
  const run = it.skipIf(promtool.skipReason !== undefined);
  const bin = promtool.path ?? 'promtool';
  const tmp = mkdtempSync(join(tmpdir(), 'tw-promql-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  run('promtool check rules accepts the rules file', async () => {
    const result = await runBinary(bin, ['check', 'rules', RULES_FILE]);
    expect(result.stdout + result.stderr).toMatch(/SUCCESS/);
    expect(result.code).toBe(0);
  });

  run('promtool test rules passes the unit tests', async () => {
    const tests = readdirSync(RULES_TEST_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => join(RULES_TEST_DIR, f));
    expect(tests.length).toBeGreaterThan(0);
    const result = await runBinary(bin, ['test', 'rules', ...tests]);
    expect(result.stdout + result.stderr).not.toMatch(/FAILED/);
    expect(result.code).toBe(0);
  });

  run('every dashboard expression parses (checked by promtool as recording rules)', async () => {
    const rules = dashboardExpressions().map((e, i) => ({
      record: `dashboard:expr_${i}`,
      expr: substituteGrafanaVariables(e.expr),
    }));
    const file = join(tmp, 'dashboard-exprs.rules.yaml');
    writeFileSync(file, stringifyYaml({ groups: [{ name: 'dashboard', rules }] }));
    const result = await runBinary(bin, ['check', 'rules', file]);
    expect(result.stdout + result.stderr).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
    expect(result.code).toBe(0);
  });
});
