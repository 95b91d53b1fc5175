import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon-process.js';
import { CHART_FILE_COPIES } from '../../scripts/sync-chart-files.js';

/**
 * No helm binary here: these tests check what `helm lint` and a reviewer would, from the files themselves,
 * and run the config and rules the chart would mount through `transfer-watch check`.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const chart = path.join(root, 'helm/transfer-watch');
const read = (file: string) => readFileSync(path.join(chart, file), 'utf8');
const values = parse(read('values.yaml')) as Record<string, unknown>;
const templateFiles = readdirSync(path.join(chart, 'templates'));
const templates = Object.fromEntries(templateFiles.map((f) => [f, read(`templates/${f}`)]));

/** The credentials the chart's Secret provides, as the Deployment's envFrom passes them. */
const CHART_SECRET_ENV = { MFT_PASSWORD: 'chart-mft-password', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X', SMTP_PASSWORD: 'chart-smtp' };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validateValues(data: unknown): string[] {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const validate = ajv.compile(JSON.parse(read('values.schema.json')) as object);
  return validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

const tmpDirs: string[] = [];
afterAll(() => tmpDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('helm/transfer-watch', () => {
  it('Chart.yaml is apiVersion v2 and its appVersion is the package version', () => {
    const meta = parse(read('Chart.yaml')) as Record<string, unknown>;
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    expect(meta.apiVersion).toBe('v2');
    expect(meta.name).toBe('transfer-watch');
    expect(meta.type).toBe('application');
    expect(String(meta.appVersion)).toBe(pkg.version);
    expect(String(meta.version)).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('values.yaml is valid against values.schema.json, which rejects what the chart cannot render', () => {
    expect(validateValues(values)).toEqual([]);
    expect(validateValues({ ...values, replicaCount: 2 }), 'unknown top-level key').not.toEqual([]);
    expect(validateValues({ ...values, rules: { 'transfers.yml': { rules: [] } } }), 'rule file not *.yaml').not.toEqual([]);
    expect(validateValues({ ...values, persistence: { ...(values.persistence as object), size: 'lots' } })).not.toEqual([]);
    expect(validateValues({ ...values, config: { ...(values.config as object), sources: [] } })).not.toEqual([]);
    expect(validateValues({ ...values, config: { ...(values.config as object), state: { dir: '/data' } } }), 'state.dir off the volume').not.toEqual([]);
  });

  it('the values schema accepts replicas only with ha, and ha only with a Redis URL or Secret', () => {
    const ha = (over: Record<string, unknown>) => ({ ...(values.ha as object), ...over });
    const redis = { url: 'redis://redis:6379/0', password: '', existingSecret: '', keyPrefix: 'tw:', caSecret: '' };
    expect(validateValues({ ...values, replicaCount: 3, ha: ha({ enabled: true, redis }) })).toEqual([]);
    expect(validateValues({ ...values, replicaCount: 3, ha: ha({ enabled: true, redis: { ...redis, url: '', existingSecret: 'redis-creds' } }) })).toEqual([]);
    expect(validateValues({ ...values, replicaCount: 3 }), 'replicas without ha').not.toEqual([]);
    expect(validateValues({ ...values, ha: ha({ enabled: true, redis: { ...redis, url: '' } }) }), 'ha without Redis').not.toEqual([]);
    expect(validateValues({ ...values, ha: ha({ enabled: true, redis: { ...redis, url: 'http://redis:6379' } }) }), 'not a redis URL').not.toEqual([]);
  });

  it('with ha.enabled the mounted config (the ha: section the chart adds) passes `transfer-watch check`', async () => {
    // What _helpers.tpl's configYaml renders with ha.enabled: the values' config plus this section.
    expect(templates['_helpers.tpl']).toContain('dict "url" "${REDIS_URL}" "password" "${REDIS_PASSWORD:-}" "key_prefix" .Values.ha.redis.keyPrefix');
    expect(templates['_helpers.tpl']).toContain('dict "redis" $redis "lease_ttl" .Values.ha.leaseTtl "replica_name" "${POD_NAME}"');
    const haValues = values.ha as { redis: { keyPrefix: string }; leaseTtl: string };
    const config = {
      ...(values.config as Record<string, unknown>),
      ha: { redis: { url: '${REDIS_URL}', password: '${REDIS_PASSWORD:-}', key_prefix: haValues.redis.keyPrefix }, lease_ttl: haValues.leaseTtl, replica_name: '${POD_NAME}' },
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-chart-ha-'));
    tmpDirs.push(dir);
    writeFileSync(path.join(dir, 'config.yaml'), stringify(config));
    mkdirSync(path.join(dir, 'rules'));
    for (const [file, content] of Object.entries(values.rules as Record<string, unknown>)) writeFileSync(path.join(dir, 'rules', file), stringify(content));
    const { code, stderr } = await runCli(['check', '--config', path.join(dir, 'config.yaml')], {
      env: { ...CHART_SECRET_ENV, REDIS_URL: 'redis://redis:6379/0', POD_NAME: 'transfer-watch-7d9f-abcde' },
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('with history.postgres the mounted config (the history: section the chart adds) passes `transfer-watch check`, the URL from the Secret', async () => {
    expect(templates['_helpers.tpl']).toContain('set $history "postgres" (dict "url" "${HISTORY_POSTGRES_URL}" "password" "${HISTORY_POSTGRES_PASSWORD:-}")');
    expect(templates['secret.yaml']).toContain('HISTORY_POSTGRES_URL: {{ . | b64enc | quote }}');
    const historyValues = values.history as { retention: string };
    const config = {
      ...(values.config as Record<string, unknown>),
      history: { retention: historyValues.retention, postgres: { url: '${HISTORY_POSTGRES_URL}', password: '${HISTORY_POSTGRES_PASSWORD:-}' } },
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-chart-history-'));
    tmpDirs.push(dir);
    writeFileSync(path.join(dir, 'config.yaml'), stringify(config));
    mkdirSync(path.join(dir, 'rules'));
    for (const [file, content] of Object.entries(values.rules as Record<string, unknown>)) writeFileSync(path.join(dir, 'rules', file), stringify(content));
    const ok = await runCli(['check', '--config', path.join(dir, 'config.yaml')], { env: { ...CHART_SECRET_ENV, HISTORY_POSTGRES_URL: 'postgres://tw:secret@db:5432/tw' } });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const bad = await runCli(['check', '--config', path.join(dir, 'config.yaml')], { env: { ...CHART_SECRET_ENV, HISTORY_POSTGRES_URL: 'mysql://db/tw' } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('history.postgres.url');
    expect(validateValues({ ...values, history: { ...historyValues, postgres: { url: 'mysql://x', password: '', existingSecret: '' } } })).not.toEqual([]);
  });

  it('with ha.enabled the Deployment rolls replicas one by one, spreads them, has a PDB, and no state volume claim', () => {
    const deployment = templates['deployment.yaml'] ?? '';
    expect(deployment).toMatch(/\{\{- if \.Values\.ha\.enabled \}\}[\s\S]*replicas: \{\{ \.Values\.replicaCount \}\}\s+strategy:\s+type: RollingUpdate/);
    expect(deployment).toContain('fail "replicaCount > 1 needs ha.enabled');
    expect(deployment).toContain('podAntiAffinity:');
    expect(deployment).toContain('fieldPath: metadata.name');
    expect(deployment).toMatch(/if and \.Values\.persistence\.enabled \(not \.Values\.ha\.enabled\)/);
    expect(templates['pvc.yaml']).toContain('(not .Values.ha.enabled)');
    expect(templates['pdb.yaml']).toMatch(/^\{\{- if and \.Values\.ha\.enabled \.Values\.podDisruptionBudget\.enabled/);
    expect(templates['pdb.yaml']).toContain('kind: PodDisruptionBudget');
    expect(templates['secret.yaml']).toContain('REDIS_URL:');
    expect(templates['secret.yaml']).toContain('REDIS_PASSWORD:');
    // Without ha the default keeps state on a volume: an emptyDir would repeat notifications after a pod move.
    expect((values.persistence as Record<string, unknown>).enabled).toBe(true);
  });

  it('a web config from a Secret is mounted and named in the config; probes and the ServiceMonitor follow its TLS and basic auth', () => {
    const deployment = templates['deployment.yaml'] ?? '';
    expect(deployment).toMatch(/if \.Values\.webConfig\.existingSecret \}\}\s+- name: web-config\s+mountPath: \/etc\/transfer-watch\/web/);
    expect(deployment).toContain('secretName: {{ .Values.webConfig.existingSecret }}');
    expect(deployment).toContain('set $live.httpGet "scheme" "HTTPS"');
    expect(templates['_helpers.tpl']).toContain('"web_config_file" "/etc/transfer-watch/web/web-config.yml"');
    const monitor = templates['servicemonitor.yaml'] ?? '';
    expect(monitor).toMatch(/if \.Values\.webConfig\.tls \}\}\s+scheme: https/);
    expect(monitor).toContain('.Values.serviceMonitor.basicAuth');
    expect(monitor).toContain('.Values.serviceMonitor.tlsConfig');
  });

  it('files/ are the same as the project dashboard and Prometheus rules (copy them when they change)', () => {
    expect(CHART_FILE_COPIES.map(([, copy]) => copy).sort()).toEqual(readdirSync(path.join(chart, 'files')).map((f) => `helm/transfer-watch/files/${f}`).sort());
    for (const [source, copy] of CHART_FILE_COPIES) {
      const same = readFileSync(path.join(root, copy), 'utf8') === readFileSync(path.join(root, source), 'utf8');
      expect(same, `${copy} differs from ${source}: run \`npm run chart:sync\``).toBe(true);
    }
    // prometheusrule.yaml rewrites this matcher to the Service's job name; without it the rules would match nothing.
    expect(read('files/transfer-watch.rules.yaml')).toContain('job="transfer-watch"');
    expect(templates['prometheusrule.yaml']).toContain('replace "job=\\"transfer-watch\\""');
  });

  it('the config and rules the chart mounts pass `transfer-watch check` (password from ${MFT_PASSWORD})', async () => {
    const config = values.config as Record<string, unknown>;
    expect(JSON.stringify(config)).toContain('${MFT_PASSWORD}');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-chart-'));
    tmpDirs.push(dir);
    // The layout of the ConfigMap volume: /etc/transfer-watch/config.yaml and /etc/transfer-watch/rules/<key>.
    writeFileSync(path.join(dir, 'config.yaml'), stringify(config));
    mkdirSync(path.join(dir, 'rules'));
    const rules = values.rules as Record<string, unknown>;
    expect(Object.keys(rules).length).toBeGreaterThan(0);
    for (const [file, content] of Object.entries(rules)) writeFileSync(path.join(dir, 'rules', file), stringify(content));
    const { code, stdout, stderr } = await runCli(['check', '--config', path.join(dir, 'config.yaml')], { env: CHART_SECRET_ENV });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const file of Object.keys(rules)) expect(stdout).toContain(`OK: ${path.join(dir, 'rules', file)}`);
    // What the Deployment assumes about the config.
    expect((config.state as Record<string, unknown>).dir).toBe('/var/lib/transfer-watch');
    expect(config.rule_files).toEqual(['rules/*.yaml']);
    expect(String((config.server as Record<string, unknown>).listen)).toMatch(new RegExp(`:${String(values.containerPort)}$`));
  });

  it('every .Values reference in the templates exists in values.yaml', () => {
    const missing: string[] = [];
    for (const [file, text] of Object.entries(templates)) {
      for (const m of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        let at: unknown = values;
        for (const key of (m[1] as string).slice(1).split('.')) {
          if (!isRecord(at) || !(key in at)) {
            missing.push(`${file}: .Values${m[1] as string}`);
            break;
          }
          at = at[key];
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('templates are balanced: every if/with/range/define has its end', () => {
    for (const [file, text] of Object.entries(templates)) {
      const actions = [...text.matchAll(/\{\{-?\s*(\/\*[\s\S]*?\*\/|[^}]*?)\s*-?\}\}/g)].map((m) => (m[1] as string).trim());
      expect(text.split('{{').length, `${file}: {{ and }} pair up`).toBe(text.split('}}').length);
      let depth = 0;
      for (const action of actions) {
        if (/^(if|with|range|define)\b/.test(action)) depth++;
        else if (/^end\b/.test(action)) depth--;
        expect(depth, `${file}: "end" without an opening action`).toBeGreaterThanOrEqual(0);
      }
      expect(depth, `${file}: unclosed if/with/range/define`).toBe(0);
    }
  });

  it('the Deployment follows the chart conventions: one replica, Recreate, probes, checksum, hardened pod', () => {
    const deployment = templates['deployment.yaml'] ?? '';
    expect(deployment).toMatch(/^\s+replicas: 1$/m);
    expect(deployment).toMatch(/strategy:\s+type: Recreate/);
    expect(deployment).toMatch(/checksum\/config: \{\{ include \(print \$\.Template\.BasePath "\/configmap\.yaml"\) \. \| sha256sum \}\}/);
    expect(deployment).toContain('secretRef:');
    expect(deployment).toContain('mountPath: /etc/transfer-watch');
    expect(deployment).toContain('mountPath: /var/lib/transfer-watch');
    expect(deployment).toMatch(/persistentVolumeClaim:[\s\S]*emptyDir: \{\}/);
    const probe = (name: string) => ((values[name] as Record<string, Record<string, unknown>>).httpGet ?? {}).path;
    expect(probe('livenessProbe')).toBe('/healthz');
    expect(probe('readinessProbe')).toBe('/readyz');
    const pod = values.podSecurityContext as Record<string, unknown>;
    const container = values.securityContext as Record<string, unknown>;
    expect(pod.runAsNonRoot).toBe(true);
    expect(pod.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(container).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    for (const key of ['nodeSelector', 'tolerations', 'affinity', 'resources']) expect(deployment).toContain(`.Values.${key}`);
  });

  it('optional resources are behind their switches, and the dashboard carries the sidecar label', () => {
    expect(templates['servicemonitor.yaml']).toMatch(/^\{\{- if \.Values\.serviceMonitor\.enabled \}\}/);
    expect(templates['prometheusrule.yaml']).toMatch(/^\{\{- if \.Values\.prometheusRule\.enabled \}\}/);
    expect(templates['grafana-dashboard.yaml']).toMatch(/^\{\{- if \.Values\.grafanaDashboard\.enabled \}\}/);
    expect(templates['pvc.yaml']).toMatch(/^\{\{- if and \.Values\.persistence\.enabled/);
    expect(templates['secret.yaml']).toMatch(/^\{\{- if not \.Values\.secrets\.existingSecret \}\}/);
    const dashboard = values.grafanaDashboard as Record<string, unknown>;
    expect([dashboard.sidecarLabel, dashboard.sidecarLabelValue]).toEqual(['grafana_dashboard', '1']);
    expect(templates['grafana-dashboard.yaml']).toContain('.Files.Get "files/transfer-watch.json"');
    // The Secret's keys are the variables the config refers to.
    for (const name of Object.keys(CHART_SECRET_ENV)) expect(templates['secret.yaml']).toContain(`${name}:`);
  });

  it('README.md has a row in its values table for every value', () => {
    const readme = read('README.md');
    const documented = new Set([...readme.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string));
    // Structured values (config, rules, security contexts, probes, resources) are documented as one row each.
    const whole = new Set(['config', 'rules', 'podSecurityContext', 'securityContext', 'livenessProbe', 'readinessProbe', 'resources']);
    const leaves: string[] = [];
    const walk = (node: unknown, prefix: string) => {
      if (isRecord(node) && Object.keys(node).length > 0 && !whole.has(prefix)) {
        for (const [k, v] of Object.entries(node)) walk(v, prefix ? `${prefix}.${k}` : k);
      } else leaves.push(prefix);
    };
    walk(values, '');
    expect(leaves.filter((l) => !documented.has(l))).toEqual([]);
  });
});
