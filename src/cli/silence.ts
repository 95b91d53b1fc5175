import type { Command } from 'commander';

// Placeholder until the command lands; replaced by its owner.
export function registerSilence(program: Command): void {
  program.command('silence').description('not implemented yet').action(() => {
    process.stderr.write('silence: not implemented yet\n');
    process.exitCode = 2;
  });
}
