import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, ConfigReadError } from '../../src/base/config-error.js';
import { loadConfig, parseConfigText } from '../../src/config/load-config.js';
import type { Problem } from '../../src/base/problem.js';
import { formatProblem } from '../../src/base/problem.js';

const lines = (...l: string[]): string => `${l.join('\n')}\n`;

const SOURCE = [
  'sources:',
  '  - name: prod',
  '    base_url: https://mft.example.com/api',
  '    username: watcher',
  '    password: pw-inline',
];

/** The problems a config text produces, as the `check` command prints them. */
function problemsOf(text: string, env: NodeJS.ProcessEnv = {}, dir = '/etc/tw'): string[] {
  try {
    parseConfigText(text, 'tw.yaml', { env, dir });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    if (!(err instanceof ConfigError)) throw err;
    expect(err.code).toBe('config_invalid');
    return err.problems.map((p: Problem) => formatProblem(p));
  }
  throw new Error('expected the config to be rejected');
}

describe('environment substitution', () => {
  const text = lines(
    'sources:',
    '  - name: ${SOURCE_NAME:-prod}',
    '    base_url: ${BASE_URL}',
    '    username: "${MFT_USER}"',
    '    password: ${MFT_PASSWORD}',
    '    tags: "$$HOME and ${EMPTY:-fallback} and $5"',
    '    # a reference in a comment is never evaluated: ${NOT_SET_ANYWHERE}',
    'receivers:',
    '  - name: mail',
    '    email:',
    '      smtp: { host: "${SMTP_HOST}", port: ${SMTP_PORT}, password: ${SMTP_PASSWORD} }',
    '      from: tw@example.com',
    '      to: [ops@example.com]',
    '  - name: chat',
    '    slack: { webhook_url: ${SLACK_WEBHOOK_URL}, send_resolved: ${SEND_RESOLVED} }',
  );
  const env = {
    BASE_URL: 'https://mft.example.com/api',
    MFT_USER: 'watcher',
    MFT_PASSWORD: `a: #b"' [x], {y}`,
    EMPTY: '',
    SMTP_HOST: 'smtp.example.com',
    SMTP_PORT: '2525',
    SMTP_PASSWORD: '0123',
    SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXX',
    SEND_RESOLVED: 'false',
  };

  it('replaces variables and defaults, keeps the document structure and re-types plain scalars', () => {
    const { config, secrets } = parseConfigText(text, 'tw.yaml', { env, dir: '/etc/tw' });
    const source = config.sources[0];
    expect(source?.name).toBe('prod');
    expect(source?.base_url).toBe('https://mft.example.com/api');
    // YAML-special characters in a value stay inside that one value.
    expect(source?.password).toBe(`a: #b"' [x], {y}`);
    expect(source?.tags).toBe('$HOME and fallback and $5');
    const email = config.receivers[0]?.email;
    expect(email?.smtp.port).toBe(2525);
    expect(email?.smtp.host).toBe('smtp.example.com');
    // A numeric-looking secret where a string is expected is kept as written (leading zero included).
    expect(email?.smtp.password).toBe('0123');
    expect(config.receivers[1]?.slack?.webhook_url).toBe(env.SLACK_WEBHOOK_URL);
    expect(config.receivers[1]?.slack?.send_resolved).toBe(false);
    expect(secrets).toEqual(expect.arrayContaining([env.MFT_PASSWORD, env.SLACK_WEBHOOK_URL, '0123']));
  });

  it('uses the default when the variable is set but empty, the value when set', () => {
    const t = lines(...SOURCE, 'state:', '  dir: ${STATE_DIR:-/var/lib/tw}');
    expect(parseConfigText(t, 'tw.yaml', { env: { STATE_DIR: '' } }).config.state.dir).toBe('/var/lib/tw');
    expect(parseConfigText(t, 'tw.yaml', { env: { STATE_DIR: '/srv/tw' } }).config.state.dir).toBe('/srv/tw');
  });

  it('reports an undefined variable at its own line and column, without repeating it as a type error', () => {
    const problems = problemsOf(text, { ...env, SMTP_PORT: undefined, BASE_URL: undefined });
    expect(problems).toEqual([
      'tw.yaml:3:15: environment variable BASE_URL is not set (use ${BASE_URL:-default} to give a default)',
      'tw.yaml:11:43: environment variable SMTP_PORT is not set (use ${SMTP_PORT:-default} to give a default)',
    ]);
  });

  it('reports an invalid reference', () => {
    const problems = problemsOf(lines(...SOURCE, 'state:', '  dir: /x/${1BAD}'));
    expect(problems).toEqual([expect.stringMatching(/^tw\.yaml:7:11: invalid variable reference "\$\{1BAD\}"/)]);
  });
});

describe('ha:', () => {
  it('reports a wrong URL scheme, a short lease and an unknown key at their lines', () => {
    const problems = problemsOf(
      lines(...SOURCE, 'ha:', '  redis:', '  url: http://redis:6379', '    url: http://redis:6379', '  lease_ttl: 100ms', '  replicas: 3').replace('  url: http://redis:6379\n', ''),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^tw\.yaml:8:10: ha\.redis\.url: must be a redis:\/\/ or rediss:\/\/ URL/),
      expect.stringMatching(/^tw\.yaml:9:14: ha\.lease_ttl: lease_ttl must be at least 1s/),
      expect.stringMatching(/^tw\.yaml:10:3: unknown key "replicas" in ha/),
    ]);
  });

  it('takes the URL from url_file and treats URL and password as secrets', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-ha-'));
    try {
      await writeFile(join(dir, 'redis-url'), 'rediss://default:R3disPa55word@redis.example:6380/2\n');
      const loaded = parseConfigText(lines(...SOURCE, 'ha:', '  redis: { url_file: redis-url, password: OtherSecret99 }', '  replica_name: pod-0'), join(dir, 'tw.yaml'));
      expect(loaded.config.ha?.redis.url).toBe('rediss://default:R3disPa55word@redis.example:6380/2');
      expect(loaded.config.ha?.lease_ttl).toBe(15_000);
      expect(loaded.config.ha?.redis.key_prefix).toBe('transfer-watch:');
      expect(loaded.secrets).toEqual(expect.arrayContaining(['rediss://default:R3disPa55word@redis.example:6380/2', 'OtherSecret99']));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('secrets from *_file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tw-config-'));
    await writeFile(join(dir, 'mft-password'), 's3cret-from-file\n');
    await writeFile(join(dir, 'slack-url'), 'https://hooks.slack.com/services/T1/B1/FILESECRET\r\n');
    await writeFile(join(dir, 'not-a-url'), 'definitely-not-a-url-SECRETVALUE\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads relative paths from the config folder and trims the trailing newline', () => {
    const text = lines(
      'sources:',
      '  - name: prod',
      '    base_url: https://mft.example.com/api',
      '    username: watcher',
      '    password_file: mft-password',
      'receivers:',
      '  - name: chat',
      `    slack: { webhook_url_file: ${join(dir, 'slack-url')} }`,
    );
    const loaded = parseConfigText(text, join(dir, 'tw.yaml'));
    expect(loaded.config.sources[0]?.password).toBe('s3cret-from-file');
    expect(loaded.config.receivers[0]?.slack?.webhook_url).toBe('https://hooks.slack.com/services/T1/B1/FILESECRET');
    expect(loaded.secrets).toEqual(expect.arrayContaining(['s3cret-from-file', 'https://hooks.slack.com/services/T1/B1/FILESECRET']));
    expect(loaded.dir).toBe(dir);
  });

  it('gives every integration of the registry its *_file forms and secrets (Teams URL, PagerDuty key, webhook headers)', async () => {
    await writeFile(join(dir, 'teams-url'), 'https://example.webhook.office.com/workflows/TEAMSSECRET\n');
    await writeFile(join(dir, 'pd-key'), 'PDROUTINGKEY0123456789\n');
    const text = lines(
      ...SOURCE,
      'receivers:',
      '  - name: teams',
      `    msteams: { webhook_url_file: ${join(dir, 'teams-url')} }`,
      '  - name: pd',
      `    pagerduty: { routing_key_file: ${join(dir, 'pd-key')} }`,
      '  - name: hook',
      '    webhook: { url: https://example.com/hook, headers: { X-Api-Key: HEADERSECRET1 } }',
      'route: { receiver: teams }',
    );
    const loaded = parseConfigText(text, join(dir, 'tw.yaml'));
    expect(loaded.config.receivers[0]?.msteams?.webhook_url).toBe('https://example.webhook.office.com/workflows/TEAMSSECRET');
    expect(loaded.config.receivers[1]?.pagerduty?.routing_key).toBe('PDROUTINGKEY0123456789');
    expect(loaded.secrets).toEqual(
      expect.arrayContaining(['https://example.webhook.office.com/workflows/TEAMSSECRET', 'PDROUTINGKEY0123456789', 'HEADERSECRET1']),
    );
  });

  it('rejects a secret given both inline and as a file, at the *_file key', () => {
    const text = lines(...SOURCE, '    password_file: mft-password');
    const problems = problemsOf(text, {}, dir);
    expect(problems).toEqual(['tw.yaml:6:5: sources[0]: both "password" and "password_file" are set; use only one']);
    expect(problems.join('\n')).not.toContain('pw-inline');
  });

  it('reports an unreadable secret file at its key, never with a secret', () => {
    const text = lines(
      ...SOURCE.slice(0, 4),
      '    password_file: missing-file',
      'receivers:',
      '  - name: hook',
      '    webhook: { url: https://example.com/hook, bearer_token_file: ./missing-token }',
    );
    const problems = problemsOf(text, {}, dir);
    expect(problems).toEqual([
      `tw.yaml:5:5: sources[0].password_file: cannot read secret file "${join(dir, 'missing-file')}" (ENOENT)`,
      `tw.yaml:8:47: receivers[0].webhook.bearer_token_file: cannot read secret file "${join(dir, 'missing-token')}" (ENOENT)`,
    ]);
  });

  it('points a validation problem of a file secret at the *_file key and keeps the value out of it', () => {
    const text = lines(...SOURCE, 'receivers:', '  - name: chat', '    slack:', '      webhook_url_file: not-a-url');
    const problems = problemsOf(text, {}, dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^tw\.yaml:9:25: receivers\[0\]\.slack\.webhook_url: /);
    expect(problems[0]).not.toContain('SECRETVALUE');
  });
});

describe('problems with positions', () => {
  it('reports a bad key at its own line and column with the nearest valid key', () => {
    const text = lines(...SOURCE, 'poll:', '  intervl: 30s', 'server:', '  listn: 0.0.0.0:9464');
    expect(problemsOf(text)).toEqual([
      'tw.yaml:7:3: unknown key "intervl" in poll (did you mean "interval"?)',
      'tw.yaml:9:3: unknown key "listn" in server (did you mean "listen"?)',
    ]);
  });

  it('reports a bad key on line 7 column 5 as :7:5:', () => {
    const text = lines(...SOURCE, '    timeout: 30s', '    tlss: { ca_file: x }');
    expect(problemsOf(text)).toEqual(['tw.yaml:7:5: unknown key "tlss" in sources[0] (did you mean "tls"?)']);
  });

  it('suggests nothing when no key is close, and handles top-level keys and nested lists', () => {
    const text = lines(
      ...SOURCE,
      'frobnicate: 1',
      'sourcez: []',
      'route:',
      '  receiver: a',
      '  routes:',
      '    - receiver: b',
      '      matchrs: []',
    );
    expect(problemsOf(text)).toEqual([
      'tw.yaml:6:1: unknown key "frobnicate" at top level',
      'tw.yaml:7:1: unknown key "sourcez" at top level (did you mean "sources"?)',
      // References are checked in the same run, although the schema was not met.
      'tw.yaml:9:13: route.receiver: unknown receiver "a"',
      'tw.yaml:11:17: route.routes[0].receiver: unknown receiver "b"',
      'tw.yaml:12:7: unknown key "matchrs" in route.routes[0] (did you mean "matchers"?)',
    ]);
  });

  it('reports every problem, each with the field path and the value position', () => {
    const text = lines(
      ...SOURCE,
      '    timeout: 5 minutes',
      'poll:',
      '  page_size: 5000',
      '  interval: 0',
      'log: { level: loud }',
      'display_timezone: Mars/Olympus',
    );
    expect(problemsOf(text)).toEqual([
      'tw.yaml:6:14: sources[0].timeout: invalid duration "5 minutes" (use e.g. 250ms, 30s, 5m, 1h, 1d)',
      'tw.yaml:8:14: poll.page_size: must be at most 1000',
      expect.stringMatching(/^tw\.yaml:9:13: poll\.interval: poll\.interval must be greater than 0$/),
      expect.stringMatching(/^tw\.yaml:10:15: log\.level: /),
      'tw.yaml:11:19: display_timezone: unknown time zone (use an IANA name such as UTC or America/Sao_Paulo)',
    ]);
  });

  it('reports a missing required key at the enclosing object', () => {
    const text = lines('sources:', '  - name: prod', '    base_url: https://mft.example.com/api', '    password: x');
    expect(problemsOf(text)).toEqual(['tw.yaml:2:5: sources[0]: missing required key "username"']);
  });

  it('reports an empty value where a string is required at its key', () => {
    const text = lines('sources:', '  - name: prod', '    base_url: https://mft.example.com/api', '    username: u', '    password:');
    expect(problemsOf(text)).toEqual(['tw.yaml:5:5: sources[0].password: expected a string, got nothing (null)']);
  });

  it('reports an empty file as missing sources', () => {
    expect(problemsOf('')).toEqual(['tw.yaml:1:1: missing required key "sources"']);
  });

  it('reports YAML syntax errors with their positions', () => {
    const text = lines(...SOURCE, 'poll:', '  interval: a: b', 'state: {}');
    expect(problemsOf(text)).toEqual(['tw.yaml:7:13: invalid YAML: Nested mappings are not allowed in compact mappings']);
  });

  it('reports duplicate keys at the second one', () => {
    const text = lines(...SOURCE, 'poll:', '  interval: 30s', '  interval: 1m');
    expect(problemsOf(text)).toEqual([expect.stringMatching(/^tw\.yaml:8:3: invalid YAML: Map keys must be unique/)]);
  });

  it('reports duplicate source names at the second name', () => {
    const text = lines(...SOURCE, ...SOURCE.slice(1));
    expect(problemsOf(text)).toEqual(['tw.yaml:6:11: sources[1].name: duplicate source name "prod"']);
  });

  it('reports unknown receivers and time intervals and bad matchers, each at its value', () => {
    const text = lines(
      ...SOURCE,
      'receivers:',
      '  - name: oncall',
      '    console: {}',
      'route:',
      '  receiver: oncal',
      '  routes:',
      "    - matchers: ['severity=\"critical\"', 'severity']",
      '      mute_time_intervals: [nights]',
      'inhibit_rules:',
      "  - { source_matchers: ['a=\"1\"'], target_matchers: ['=x'] }",
    );
    expect(problemsOf(text)).toEqual([
      'tw.yaml:10:13: route.receiver: unknown receiver "oncal" (did you mean "oncall"?)',
      expect.stringMatching(/^tw\.yaml:12:41: route\.routes\[0\]\.matchers\[1\]: invalid matcher: /),
      'tw.yaml:13:29: route.routes[0].mute_time_intervals[0]: unknown time interval "nights" (define it under mute_time_intervals)',
      expect.stringMatching(/^tw\.yaml:15:53: inhibit_rules\[0\]\.target_matchers\[0\]: invalid matcher: /),
    ]);
  });

  it('never shows a secret in a message, even when it was put in the wrong field', () => {
    const text = lines(...SOURCE.slice(0, 4), '    password: hunter2-very-secret', '    timeout: hunter2-very-secret');
    const problems = problemsOf(text);
    expect(problems).toEqual(['tw.yaml:6:14: sources[0].timeout: invalid duration "<redacted>" (use e.g. 250ms, 30s, 5m, 1h, 1d)']);
  });
});

describe('values', () => {
  it('fills defaults and parses durations to milliseconds', () => {
    const { config } = parseConfigText(lines(...SOURCE, 'poll: { interval: 1m30s, delay: 250ms }'), 'tw.yaml', { dir: '/etc/tw' });
    expect(config.poll).toEqual({
      interval: 90_000,
      success_interval: 60_000,
      delay: 250,
      overlap: 120_000,
      page_size: 1000,
      initial_lookback: 3_600_000,
      max_window: 3_600_000,
      stale_after: 300_000,
    });
    expect(config.sources[0]).toMatchObject({ timeout: 30_000, retries: 3, instances: [], tags: '', tls: { ca_file: '', insecure_skip_verify: false } });
    expect(config.server.listen).toBe('0.0.0.0:9464');
    expect(config.log.level).toBe('info');
    expect(config.display_timezone).toBe('UTC');
    expect(config.receivers).toEqual([]);
    expect(config.route).toBeUndefined();
  });

  it('resolves relative paths against the config folder and keeps absolute ones', () => {
    const text = lines(
      ...SOURCE,
      '    tls: { ca_file: certs/ca.pem }',
      'state: { dir: ./data }',
      'rule_files: ["rules/*.yaml", /opt/rules/extra.yaml]',
      'templates: [tmpl/slack.hbs]',
      'receivers:',
      '  - name: mail',
      '    email: { smtp: { host: h, tls: { ca_file: /etc/ssl/smtp.pem } }, from: a@b.c, to: [d@e.f] }',
    );
    const { config } = parseConfigText(text, 'conf/tw.yaml', { dir: '/etc/tw' });
    expect(config.sources[0]?.tls.ca_file).toBe('/etc/tw/certs/ca.pem');
    expect(config.state.dir).toBe('/etc/tw/data');
    expect(config.rule_files).toEqual(['/etc/tw/rules/*.yaml', '/opt/rules/extra.yaml']);
    expect(config.templates).toEqual(['/etc/tw/tmpl/slack.hbs']);
    expect(config.receivers[0]?.email?.smtp.tls.ca_file).toBe('/etc/ssl/smtp.pem');
  });

  it('accepts anchors, aliases and merge keys', () => {
    const text = lines(
      'sources:',
      '  - &prod { name: a, base_url: https://mft.example.com/api, username: u, password: p, timeout: 10s }',
      '  - <<: *prod',
      '    name: b',
    );
    const { config } = parseConfigText(text, 'tw.yaml', { dir: '/etc/tw' });
    expect(config.sources.map((s) => [s.name, s.username, s.timeout])).toEqual([
      ['a', 'u', 10_000],
      ['b', 'u', 10_000],
    ]);
  });

  it('does not quote source text in YAML syntax errors (it may be a secret)', () => {
    const problems = problemsOf(lines('sources: [1]', '] hunter2-secret'));
    expect(problems).toEqual(['tw.yaml:2:1: invalid YAML: Unexpected flow-seq-end token in YAML stream', 'tw.yaml:2:3: invalid YAML: Unexpected scalar token in YAML stream']);
    for (const p of problems) expect(p).not.toContain('hunter2');
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) bomb.push(`l${i}: &l${i} [${Array(10).fill(i === 1 ? '*a' : `*l${i - 1}`).join(', ')}]`);
    expect(problemsOf(lines(...bomb))).toEqual([expect.stringMatching(/^tw\.yaml:1:1: invalid YAML: .*alias/i)]);
  });

  it('rejects an anchor parked under an unknown key', () => {
    const text = lines(
      'x-common: &common { base_url: https://mft.example.com/api, username: u, password: p }',
      'sources:',
      '  - { name: a, base_url: https://a.example.com, username: u, password: p }',
    );
    // x-common is an unknown key: anchors need a home, and the schema is strict about it.
    expect(problemsOf(text)).toEqual(['tw.yaml:1:1: unknown key "x-common" at top level']);
  });
});

describe('loadConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tw-load-'));
    await writeFile(join(dir, 'tw.yaml'), lines(...SOURCE.slice(0, 4), '    password: ${PW}', 'rule_files: [rules/*.yaml]'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the file, takes the given environment and resolves paths against its folder', async () => {
    const loaded = await loadConfig(join(dir, 'tw.yaml'), { env: { PW: 'from-env' } });
    expect(loaded.config.sources[0]?.password).toBe('from-env');
    expect(loaded.config.rule_files).toEqual([join(dir, 'rules/*.yaml')]);
    expect(loaded.file).toBe(join(dir, 'tw.yaml'));
    expect(loaded.dir).toBe(dir);
    expect(loaded.secrets).toContain('from-env');
  });

  it('throws ConfigReadError (not ConfigError) when the file cannot be read', async () => {
    const err: unknown = await loadConfig(join(dir, 'nope.yaml'), { env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigReadError);
    expect(err).toMatchObject({ code: 'config_unreadable' });
    expect(String(err)).toContain('nope.yaml');
  });
});
