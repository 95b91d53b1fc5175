import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerTestRules(program: Command): void {
  program.command('test-rules').description('not implemented yet').action(() => {
    process.stderr.write('test-rules: not implemented yet\n');
    process.exitCode = 2;
  });
}
