import type { Command } from 'commander';
import { formatProblem } from '../base/problem.js';
import { runRuleTestFile, type RuleTestFileResult } from '../rules/rule-test-runner.js';
import { errorMessage } from '../util/errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** `transfer-watch test-rules FILE...`: offline rule unit tests; exit 1 on any failure, 2 when a file cannot be read. */
export async function testRulesCommand(files: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  let failed = false;
  for (const file of files) {
    let result: RuleTestFileResult;
    try {
      result = await runRuleTestFile(file);
    } catch (e) {
      err.write(`${file}: cannot read test file: ${errorMessage(e)}\n`);
      return EXIT_USAGE;
    }
    out.write(`${file}\n`);
    for (const p of result.problems) err.write(`${formatProblem(p)}\n`);
    if (result.problems.length > 0) failed = true;
    for (const r of result.results) {
      out.write(`  ${r.passed ? 'PASS' : 'FAIL'} ${r.name}\n`);
      for (const f of r.failures) out.write(`    ${f.split('\n').join('\n    ')}\n`);
      if (!r.passed) failed = true;
    }
  }
  return failed ? EXIT_FAILURE : EXIT_OK;
}

export function registerTestRules(program: Command): void {
  program
    .command('test-rules')
    .description('run offline rule unit tests (rule files, input transfers, evaluation times, expected alerts) on a fake clock')
    .argument('<files...>', 'rule test files (YAML)')
    .action(async (files: string[]) => {
      process.exitCode = await testRulesCommand(files, process.stdout, process.stderr);
    });
}
