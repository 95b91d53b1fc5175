import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerCheck(program: Command): void {
  program.command('check').description('not implemented yet').action(() => {
    process.stderr.write('check: not implemented yet\n');
    process.exitCode = 2;
  });
}
