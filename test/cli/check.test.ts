import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Runs the built binary, as users do; `npm test` builds before vitest runs.
const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH, ...env } }, (err, stdout, stderr) => {
      const code = err && typeof err.code === 'number' ? err.code : err ? -1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('transfer-watch check: every problem of every stage in one run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tw-check-all-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists a config error, a reference error, a rule error and a web config error together, sorted by file and line; an unset variable once', async () => {
    await mkdir(join(dir, 'rules'), { recursive: true });
    await writeFile(
      join(dir, 'rules', 'bad.yaml'),
      ['rules:', '  - name: Burst', '    type: error_burst', '    threshold: 0', '    window: 10m', ''].join('\n'),
    );
    await writeFile(join(dir, 'web.yml'), ['basic_auth_users:', '  alice: plaintext', ''].join('\n'));
    await writeFile(
      join(dir, 'config.yaml'),
      [
        'sources:',
        '  - name: prod',
        '    base_url: https://mft.example.com/api',
        '    username: ${MFT_USER}',
        '    password: ${MFT_USER}',
        'poll: { interval: forever }',
        'rule_files: [rules/*.yaml]',
        'receivers: [{ name: chat, console: {} }]',
        'route: { receiver: nobody }',
        'server: { web_config_file: web.yml }',
        '',
      ].join('\n'),
    );
    const r = await runCli(['check', '--config', join(dir, 'config.yaml')]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    const files = lines.map((l) => l.slice(0, l.indexOf(':', l.indexOf('.y'))));
    expect(files).toEqual([...files].sort());
    expect(lines.filter((l) => l.includes('MFT_USER is not set'))).toHaveLength(1);
    expect(lines.some((l) => l.includes('config.yaml:6:') && l.includes('poll.interval'))).toBe(true);
    expect(lines.some((l) => l.includes('rules/bad.yaml:4:') && l.includes('threshold'))).toBe(true);
    expect(lines.some((l) => l.includes('web.yml:2:') && l.includes('bcrypt'))).toBe(true);
    // The unknown receiver is listed although the schema was not met (poll.interval): all problems in one run.
    expect(lines.some((l) => l.includes('config.yaml:9:') && l.includes('unknown receiver "nobody"'))).toBe(true);
  });

  it('a key typo, a rule with a wrong type and a route to an unknown receiver: all three at once, the rule named in words', async () => {
    await mkdir(join(dir, 'typo', 'rules'), { recursive: true });
    await writeFile(join(dir, 'typo', 'rules', 'r.yaml'), ['rules:', '  - name: BankBurst', '    type: error_burst', '    threshold: "five"', '    window: 5m', ''].join('\n'));
    await writeFile(
      join(dir, 'typo', 'config.yaml'),
      [
        'sources:',
        '  - name: prod',
        '    base_url: https://mft.example.com/api',
        '    username: u',
        '    pasword: p',
        'rule_files: [rules/*.yaml]',
        'receivers: [{ name: chat, console: {} }]',
        'route:',
        '  receiver: chat',
        '  routes:',
        '    - { matchers: [\'severity="critical"\'], receiver: pager }',
        '',
      ].join('\n'),
    );
    const r = await runCli(['check', '--config', join(dir, 'typo', 'config.yaml')]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n').map((l) => l.slice(l.indexOf('typo') + 5));
    expect(lines).toEqual([
      'config.yaml:2:5: sources[0]: missing required key "password"',
      'config.yaml:5:5: unknown key "pasword" in sources[0] (did you mean "password"?)',
      'config.yaml:11:54: route.routes[0].receiver: unknown receiver "pager"',
      'rules/r.yaml:4:16: rule "BankBurst": threshold: expected a number, got a string',
    ]);
  });

  it('warns at its line when a configured sla.late_until is cut by the next window (one file, one deadline), and passes', async () => {
    await mkdir(join(dir, 'cut'), { recursive: true });
    await writeFile(
      join(dir, 'cut', 'r.yaml'),
      [
        'rules:',
        '  - name: Daily',
        '    type: missing_file',
        '    match: { file: ["*.RET"] }',
        '    deadline: "0 9 * * *"',
        '    timezone: UTC',
        '    window: 2h',
        '    sla: { late_until: 30h }',
        '  - name: Fits',
        '    type: missing_file',
        '    match: { file: ["*.TXT"] }',
        '    deadline: "0 9 * * *"',
        '    timezone: UTC',
        '    window: 2h',
        '    sla: { late_until: 4h }',
        '',
      ].join('\n'),
    );
    await writeFile(join(dir, 'cut', 'config.yaml'), ['sources:', '  - { name: prod, base_url: "https://mft.example.com/api", username: u, password: p }', 'rule_files: [r.yaml]', 'receivers: [{ name: oncall, console: {} }]', 'route: { receiver: oncall }', ''].join('\n'));
    const r = await runCli(['check', '--config', join(dir, 'cut', 'config.yaml')]);
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n').map((l) => l.slice(l.indexOf('/cut/') + 5))).toEqual([
      'r.yaml:8:24: warning: rule "Daily": sla.late_until 1d6h is cut to 22h: an occurrence closes when the key\'s next window opens, so one file is evidence of one deadline only (contract 11c)',
    ]);
  });

  it('warns when a calendar of a country with regional holidays has no region, naming the days it leaves out, and passes (11c)', async () => {
    await mkdir(join(dir, 'regions'), { recursive: true });
    await writeFile(
      join(dir, 'regions', 'r.yaml'),
      [
        'rules:',
        '  - name: LondonStatement',
        '    type: missing_file',
        '    match: { file: ["*.RET"] }',
        '    deadline: "0 9 * * 1-5"',
        '    timezone: Europe/London',
        '    window: 2h',
        '    calendar: uk',
        '  - name: InlineScotland',
        '    type: missing_file',
        '    match: { file: ["*.TXT"] }',
        '    deadline: "0 9 * * 1-5"',
        '    timezone: Europe/London',
        '    window: 2h',
        '    calendar: { holidays: { country: GB }, exclude_weekdays: [sat, sun] }',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'regions', 'config.yaml'),
      [
        'sources:',
        '  - { name: prod, base_url: "https://mft.example.com/api", username: u, password: p }',
        'rule_files: [r.yaml]',
        'receivers: [{ name: oncall, console: {} }]',
        'route: { receiver: oncall }',
        'calendars:',
        '  uk: { holidays: { country: GB, types: [public, bank] } }',
        '  england: { holidays: { country: GB, region: ENG, types: [public, bank] } }',
        '',
      ].join('\n'),
    );
    const r = await runCli(['check', '--config', join(dir, 'regions', 'config.yaml')]);
    expect(r.code).toBe(0);
    const lines = r.stderr.trimEnd().split('\n').map((l) => l.slice(l.indexOf('/regions/') + 9));
    expect(lines).toHaveLength(2);
    // England's, Wales' and Northern Ireland's Summer bank holiday (the last Monday of August) every year; the
    // calendar with a region says nothing.
    expect(lines[0]).toMatch(/^config\.yaml:7:\d+: warning: calendar "uk": holidays of GB without a region leave out \d+ regional days of \d{4}: .*\d{4}-08-\d\d Summer bank holiday \(ENG, NIR, WLS\).*Set holidays\.region to one of ALD, ENG, NIR, SCT, WLS/);
    expect(lines[1]).toMatch(/^r\.yaml:15:\d+: warning: rule "InlineScotland": its calendar: holidays of GB without a region leave out/);
  });

  it('a key typo, an unknown receiver and a rule with an unknown calendar among its other problems: all in one run, config first, the calendar at its own line', async () => {
    // Rule file names sort before the config's: the order is the order the files are read, not the alphabet's.
    await mkdir(join(dir, 'cal', 'a-rules'), { recursive: true });
    await writeFile(
      join(dir, 'cal', 'a-rules', 'r.yaml'),
      [
        'rules:',
        '  - name: Statement',
        '    type: missing_file',
        '    match: { file: ["*.RET"] }',
        '    deadline: "0 8 * * 1-5"',
        '    timezone: America/Sao_Paulo',
        '    calendar: B3',
        '    severty: warning',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'cal', 'z-config.yaml'),
      [
        'sources:',
        '  - { name: prod, base_url: "https://mft.example.com/api", username: u, password: p, timeuot: 5s }',
        'rule_files: [a-rules/*.yaml]',
        'calendars:',
        '  br-sp: { holidays: { country: BR, region: SP } }',
        'receivers: [{ name: oncall, console: {} }]',
        'route: { receiver: on-call }',
        '',
      ].join('\n'),
    );
    const r = await runCli(['check', '--config', join(dir, 'cal', 'z-config.yaml')]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n').map((l) => l.slice(l.indexOf('/cal/') + 5));
    expect(lines).toEqual([
      'z-config.yaml:2:86: unknown key "timeuot" in sources[0] (did you mean "timeout"?)',
      'z-config.yaml:7:20: route.receiver: unknown receiver "on-call" (did you mean "oncall"?)',
      'a-rules/r.yaml:2:5: rule "Statement": missing required key "window"',
      'a-rules/r.yaml:7:15: rule "Statement": calendar: unknown calendar "B3"; the config\'s calendars: br-sp',
      'a-rules/r.yaml:8:5: rule "Statement": unknown key "severty" (did you mean "severity"?)',
    ]);
  });

  it('the shipped example passes on a clean environment: each unset variable is one warning at its first use', async () => {
    const example = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));
    const r = await runCli(['check', '--config', example]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`OK: ${example}`);
    const warnings = r.stderr.trimEnd().split('\n');
    expect(warnings.map((l) => /variable (\w+) is not set/.exec(l)?.[1])).toEqual(['MFT_USER', 'MFT_PASSWORD', 'SLACK_WEBHOOK_URL', 'SMTP_PASSWORD', 'WEBHOOK_URL', 'WEBHOOK_TOKEN']);
    for (const line of warnings) expect(line).toMatch(/^.*config\.example\.yaml:\d+:\d+: warning: environment variable \w+ is not set: run refuses to start without it/);
    // MFT_USER's first use is the username of the first source.
    const userLine = readFileSync(example, 'utf8').split('\n').findIndex((l) => l.includes('${MFT_USER}')) + 1;
    expect(warnings[0]).toContain(`config.example.yaml:${userLine}:`);
  });

  it('--require-env: an unset variable is a problem, as run treats it; --allow-missing-env: no warning, the names once', async () => {
    const example = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));
    const strict = await runCli(['check', '--config', example, '--require-env']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('environment variable MFT_USER is not set (use ${MFT_USER:-default} to give a default)');
    expect(strict.stderr).not.toContain('warning:');
    const quiet = await runCli(['check', '--config', example, '--allow-missing-env']);
    expect(quiet.stderr).toBe('');
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toContain('not set, so the values they fill were not checked: MFT_PASSWORD, MFT_USER');
    const both = await runCli(['check', '--config', example, '--allow-missing-env', '--require-env']);
    expect(both.code).toBe(2);
  });
});

describe('transfer-watch check', () => {
  let dir: string;
  const good = [
    'sources:',
    '  - name: prod',
    '    base_url: https://mft.example.com/api',
    '    username: watcher',
    '    password: ${MFT_PASSWORD}',
    'receivers:',
    '  - name: chat',
    '    slack: { webhook_url: "${SLACK_WEBHOOK_URL}" }',
    '',
  ].join('\n');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tw-check-'));
    await writeFile(join(dir, 'good.yaml'), good);
    await writeFile(
      join(dir, 'bad.yaml'),
      good.replace('    username: watcher', '    username: watcher\n    timeout: 5 minutes').replace("receivers:", 'server:\n  listn: ":9464"\nreceivers:'),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const env = { MFT_PASSWORD: 'cli-secret-password', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/CLISECRET' };

  it('prints OK on stdout and exits 0 for a valid config', async () => {
    const file = join(dir, 'good.yaml');
    const r = await runCli(['check', '--config', file], env);
    expect(r).toEqual({ code: 0, stdout: `OK: ${file}\n`, stderr: '' });
  });

  it('prints every problem as FILE:LINE:COL: message on stderr and exits 1', async () => {
    const file = join(dir, 'bad.yaml');
    const r = await runCli(['check', '--config', file], { ...env, SLACK_WEBHOOK_URL: undefined });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `${file}:5:14: sources[0].timeout: invalid duration "5 minutes" (use e.g. 250ms, 30s, 5m, 1h, 1d)`,
      `${file}:8:3: unknown key "listn" in server (did you mean "listen"?)`,
      `${file}:11:28: warning: environment variable SLACK_WEBHOOK_URL is not set: run refuses to start without it, and the values it fills were not checked`,
    ]);
    expect(r.stderr).not.toContain('cli-secret-password');
    // Where it runs (--require-env), the unset variable is a problem like the others.
    const strict = await runCli(['check', '--config', file, '--require-env'], { ...env, SLACK_WEBHOOK_URL: undefined });
    expect(strict.stderr.trimEnd().split('\n')[2]).toBe(
      `${file}:11:28: environment variable SLACK_WEBHOOK_URL is not set (use \${SLACK_WEBHOOK_URL:-default} to give a default)`,
    );
  });

  it('checks every rule file the config names and feeds their problems into the same list', async () => {
    const sub = join(dir, 'with-rules');
    await mkdir(join(sub, 'rules'), { recursive: true });
    await writeFile(join(sub, 'tw.yaml'), `${good}rule_files: [rules/*.yaml]\n`);
    await writeFile(
      join(sub, 'rules', 'good.yaml'),
      ['rules:', '  - name: Burst', '    type: error_burst', '    threshold: 5', '    window: 10m', '    severity: critical', ''].join('\n'),
    );
    const ok = await runCli(['check', '--config', join(sub, 'tw.yaml')], env);
    expect(ok).toEqual({ code: 0, stdout: `OK: ${join(sub, 'tw.yaml')}\nOK: ${join(sub, 'rules', 'good.yaml')}\n`, stderr: '' });

    await writeFile(join(sub, 'rules', 'bad.yaml'), ['rules:', '  - name: Other', '    type: no_such_type', ''].join('\n'));
    const bad = await runCli(['check', '--config', join(sub, 'tw.yaml')], env);
    expect(bad.code).toBe(1);
    const lines = bad.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.startsWith(`${join(sub, 'rules', 'bad.yaml')}:3:`)).toBe(true);
  });

  it('exits 2 with a clear message when the config file cannot be read', async () => {
    const r = await runCli(['check', '--config', join(dir, 'missing.yaml')], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read config file');
    expect(r.stderr).toContain('missing.yaml');
  });

  it('exits 2 when --config is missing', async () => {
    const r = await runCli(['check'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--config');
  });
  it('warns of a rule_files pattern that matches no file, naming the config and the pattern (no rule would load from it)', async () => {
    await mkdir(join(dir, 'typo'), { recursive: true });
    await writeFile(join(dir, 'typo', 'rules.yaml'), ['rules:', '  - { name: Burst, type: error_burst, threshold: 3, window: 10m }', ''].join('\n'));
    await writeFile(
      join(dir, 'typo', 'config.yaml'),
      ['sources:', '  - { name: prod, base_url: "https://mft.example.com/api", username: u, password: p }', 'rule_files: [rules.yaml, rulez/*.yaml]', 'receivers: [{ name: oncall, console: {} }]', 'route: { receiver: oncall }', ''].join('\n'),
    );
    const r = await runCli(['check', '--config', join(dir, 'typo', 'config.yaml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain(`${join(dir, 'typo', 'config.yaml')}:1:1: warning: rule_files: "${join(dir, 'typo', 'rulez')}/*.yaml" matches no file`);
    expect(r.stdout + r.stderr).not.toContain('rules.yaml" matches no file');
  });
});
