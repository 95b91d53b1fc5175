import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:reliability`: the daemon as a real process against the simulator's faults and failing
 * receivers (test/reliability/). Not part of `npm test`: it takes minutes. Files end in `.reliability.ts` so the
 * main config (`*.test.ts`) never picks them up.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/reliability/**/*.reliability.ts'],
    globalSetup: ['test/reliability/global-setup.ts'],
    testTimeout: 240_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time: this is a 2-core machine and each scenario runs a daemon process.
    maxWorkers: 2,
  },
});
