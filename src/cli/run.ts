import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerRun(program: Command): void {
  program.command('run').description('not implemented yet').action(() => {
    process.stderr.write('run: not implemented yet\n');
    process.exitCode = 2;
  });
}
