import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerQuery(program: Command): void {
  program.command('query').description('not implemented yet').action(() => {
    process.stderr.write('query: not implemented yet\n');
    process.exitCode = 2;
  });
}
