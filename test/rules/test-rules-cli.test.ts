import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'dist', 'cli', 'main.js');

/** Runs the built binary (`npm test` builds first); returns exit code and output. */
async function testRules(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, 'test-rules', ...args], { cwd: REPO });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('transfer-watch test-rules (built binary)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tw-test-rules-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes every bundled example rule test (rules/tests/*.yaml)', async () => {
    const files = (await readdir(path.join(REPO, 'rules', 'tests'))).filter((f) => f.endsWith('.yaml')).map((f) => path.join('rules', 'tests', f));
    expect(files.length).toBeGreaterThanOrEqual(2);
    const result = await testRules(files);
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toContain('FAIL');
    expect(result.stdout).toContain('PASS');
    expect(result.code).toBe(0);
  });

  it('a failing expectation exits 1 and shows expected vs got', async () => {
    const file = path.join(dir, 'failing.test.yaml');
    await writeFile(
      file,
      [
        `rule_files: [${JSON.stringify(path.join(REPO, 'rules', 'transfers.yaml'))}]`,
        'tests:',
        '  - name: wrong count',
        '    start: 2026-11-20T10:00:00Z',
        '    input_transfers:',
        ...[1, 2, 3, 4, 5, 6, 7, 8].map((m) => `      - { time: ${m}m, mft_instance: PROD01, user: BANK1, code: 36 }`),
        '    alert_rule_test:',
        '      - eval_time: 9m',
        '        alertname: TransferErrorBurst',
        '        exp_alerts:',
        '          - exp_labels: { severity: critical, team: treasury, user: BANK1, mft_instance: PROD01 }',
        '            exp_annotations: { summary: "7 failed transfers for BANK1 in 10m" }',
        '',
      ].join('\n'),
    );
    const result = await testRules([file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL wrong count');
    expect(result.stdout).toContain('summary: 7 failed transfers for BANK1 in 10m');
    expect(result.stdout).toContain('summary: 8 failed transfers for BANK1 in 10m');
  });

  it('problems in the test file are reported as FILE:LINE:COL and exit 1; an unreadable file exits 2', async () => {
    const file = path.join(dir, 'bad.test.yaml');
    await writeFile(file, 'rule_files: [../rules/transfers.yaml]\ntests:\n  - name: x\n    strat: 2026-11-20T10:00:00Z\n');
    const bad = await testRules([file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file}:4:5: unknown key "strat" (did you mean "start"?)`);
    const missing = await testRules([path.join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect((await testRules([])).code).toBe(2);
  });
});
