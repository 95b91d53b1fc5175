import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests start real servers and real child processes; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
