import { defineConfig } from 'vitest/config';

/**
 * `npm test`'s suite in two groups, one after the other, on the 2-core machines it runs on (vitest's default there
 * is one file at a time, and most of the suite's time is real daemons, simulators and receivers waiting on polls,
 * group_wait and deadlines, not CPU):
 * - two files at a time: every unit, integration and end-to-end file but those below;
 * - then one at a time: the HA replicas (failovers and leases timed on real Redis and PostgreSQL), the shipped
 *   rules' noise (ten business days of the engine's arithmetic, CPU-bound), which measure the machine when they
 *   share it, and the status page in Chromium. CI runs this group once, on Node 20 (.ci/run): none of it tests
 *   the runtime.
 */
const ALONE = ['test/e2e/ha*.test.ts', 'test/rules/shipped-rules-noise-*.test.ts', 'test/e2e/status-page*.test.ts'];

/**
 * CI's second runtime (`TW_RUNTIME_SMOKE=1`, .ci/run): the end-to-end and CLI files are the built daemon's behaviour,
 * the same JavaScript on any runtime, and most of the suite's time; there they run as this smoke set through the
 * built binary (the daemon's life, the SLA backfill and ledger on that runtime's SQLite, the CLI's start and signals),
 * every other file whole.
 */
const RUNTIME_SMOKE = process.env['TW_RUNTIME_SMOKE'] === '1';
const SMOKE = ['test/e2e/daemon.test.ts', 'test/e2e/sla-backfill.test.ts', 'test/cli/run-startup.test.ts', 'test/cli/run-signals.test.ts'];

export default defineConfig({
  test: {
    // Tests start real servers and real child processes; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...ALONE, ...(RUNTIME_SMOKE ? ['test/e2e/**', 'test/cli/**'] : [])], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      ...(RUNTIME_SMOKE ? [{ extends: true as const, test: { name: 'smoke', include: SMOKE, maxWorkers: 2, sequence: { groupOrder: 0 } } }] : []),
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
