import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerDemo(program: Command): void {
  program.command('demo').description('not implemented yet').action(() => {
    process.stderr.write('demo: not implemented yet\n');
    process.exitCode = 2;
  });
}
