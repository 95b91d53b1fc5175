import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerSimulate(program: Command): void {
  program.command('simulate').description('not implemented yet').action(() => {
    process.stderr.write('simulate: not implemented yet\n');
    process.exitCode = 2;
  });
}
