import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatProblem } from '../../src/base/problem.js';
import { loadRuleFiles, parseRuleFile } from '../../src/rules/load-rules.js';
import { ruleTypeNames } from '../../src/rules/registry.js';

const REPO = path.resolve(import.meta.dirname, '../..');

function problems(yaml: string): string[] {
  return parseRuleFile('r.yaml', yaml).problems.map(formatProblem);
}

describe('rule file validation', () => {
  it('points unknown keys at themselves and suggests the nearest valid key', () => {
    const yaml = ['rules:', '  - name: A', '    type: error_burst', '    threshold: 3', '    window: 5m', '    treshold: 4', ''].join('\n');
    expect(problems(yaml)).toEqual(['r.yaml:6:5: rule "A": unknown key "treshold" (did you mean "threshold"?)']);
    expect(problems('rules:\n  - name: A\n    type: error_burst\n    threshold: 3\n')).toEqual(['r.yaml:2:5: rule "A": missing required key "window"']);
  });

  it('reports unknown types with the known ones, at the type value', () => {
    expect(problems('rules:\n  - name: A\n    type: erorr_burst\n')).toEqual([
      'r.yaml:3:11: unknown rule type "erorr_burst" (known: error_burst, missing_file, failure_ratio, volume, duplicate_file, size_anomaly, error_code, stuck_partner)',
    ]);
    expect(problems('rules:\n  - name: A\n')[0]).toMatch(/^r\.yaml:2:5: rule has no "type"/);
  });

  it('reports bad values at their position: durations, cron, time zone, match labels, templates', () => {
    const yaml = [
      'rules:',
      '  - name: A',
      '    type: missing_file',
      '    deadline: "0 25 * * *"',
      '    timezone: Mars/Olympus',
      '    window: 8 hours',
      '    match: { usr: [X] }',
      '    annotations: { summary: "{{cnt}} missing" }',
      '  - name: B',
      '    type: error_burst',
      '    threshold: 0',
      '    window: 5m',
      '    group_by: [instance]',
      '    annotations: { summary: "{{#each}}" }',
      '',
    ].join('\n');
    const got = problems(yaml);
    expect(got).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^r\.yaml:4:15: rule "A": deadline: invalid cron expression/),
        expect.stringMatching(/^r\.yaml:5:15: rule "A": timezone: unknown time zone/),
        expect.stringMatching(/^r\.yaml:6:13: rule "A": window: invalid duration "8 hours"/),
        'r.yaml:7:14: rule "A": unknown key "usr" (did you mean "user"?)',
        expect.stringMatching(/^r\.yaml:11:16: rule "B": threshold: /),
        expect.stringMatching(/^r\.yaml:13:16: rule "B": group_by\.0: /),
      ]),
    );
    // Template problems are found once the schema passes.
    expect(problems('rules:\n  - name: A\n    type: error_burst\n    threshold: 1\n    window: 1m\n    annotations: { summary: "{{cnt}}" }\n')).toEqual([
      'r.yaml:6:29: rule "A": annotations.summary: template uses unknown variable "cnt" (available: labels, alertname, severity, count, threshold, window, window_ms, window_start, window_end, timezone)',
    ]);
    expect(problems('rules:\n  - name: A\n    type: error_burst\n    threshold: 1\n    window: 1m\n    labels: { x: "{{#if}}" }\n')[0]).toMatch(
      /^r\.yaml:6:18: rule "A": labels\.x: invalid template/,
    );
  });

  it('reports YAML syntax errors with their position', () => {
    expect(problems('rules:\n  - name: A\n   type: [\n')[0]).toMatch(/^r\.yaml:\d+:\d+: /);
  });

  it('reserves the built-in alert name', () => {
    expect(problems('rules:\n  - name: TransferWatchSourceDown\n    type: error_burst\n    threshold: 1\n    window: 1m\n')).toEqual([
      'r.yaml:2:11: name: "TransferWatchSourceDown" is the built-in source alert; choose another name',
    ]);
  });

  it('rejects labels that would override alertname or severity', () => {
    expect(problems('rules:\n  - name: A\n    type: error_burst\n    threshold: 1\n    window: 1m\n    labels: { severity: x }\n')[0]).toMatch(
      /^r\.yaml:6:\d+: rule "A": labels\.severity: label "severity" is set by the engine/,
    );
  });
});

describe('loadRuleFiles', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tw-rules-'));
    await mkdir(path.join(dir, 'rules', 'team'), { recursive: true });
    const rule = (name: string) => `rules:\n  - name: ${name}\n    type: error_burst\n    threshold: 1\n    window: 1m\n`;
    await writeFile(path.join(dir, 'rules', 'a.yaml'), rule('Alpha'));
    await writeFile(path.join(dir, 'rules', 'b.yaml'), `${rule('Beta')}  - name: Alpha\n    type: error_burst\n    threshold: 2\n    window: 1m\n`);
    await writeFile(path.join(dir, 'rules', 'team', 'c.yaml'), rule('Gamma'));
    await writeFile(path.join(dir, 'rules', 'notes.txt'), 'not a rule file');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('expands globs relative to the base dir, in a stable order, and flags duplicate names with both places', async () => {
    const loaded = await loadRuleFiles(['rules/*.yaml', 'rules/**/*.yaml', 'missing/*.yaml'], dir);
    expect(loaded.files.map((f) => path.relative(dir, f))).toEqual(['rules/a.yaml', 'rules/b.yaml', 'rules/team/c.yaml']);
    expect(loaded.rules.map((r) => r.name)).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(loaded.problems.map(formatProblem)).toEqual([
      `${path.join(dir, 'rules', 'b.yaml')}:6:11: duplicate rule name "Alpha" (first defined at ${path.join(dir, 'rules', 'a.yaml')}:2:11)`,
    ]);
  });

  it('a pattern matching nothing is not an error, but a warning that names it', async () => {
    const loaded = await loadRuleFiles(['nothing/*.yaml', 'absent.yaml'], dir);
    expect({ rules: loaded.rules, files: loaded.files, problems: loaded.problems }).toEqual({ rules: [], files: [], problems: [] });
    expect(loaded.warnings.map((w) => w.message)).toEqual([
      `rule_files: "nothing/*.yaml" matches no file (resolved from ${dir}): no rule is loaded from it`,
      `rule_files: "absent.yaml" matches no file (resolved from ${dir}): no rule is loaded from it`,
    ]);
  });

  it('the bundled example rules load without problems', async () => {
    const loaded = await loadRuleFiles(['rules/*.yaml'], REPO);
    expect(loaded.problems).toEqual([]);
    // Every rule type has at least one bundled example (each with its test in rules/tests/).
    expect(new Set(loaded.rules.map((r) => r.type))).toEqual(new Set(ruleTypeNames()));
  });
});
