import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * `npm run test:reliability`: the daemon as a real process against the simulator's faults and failing
 * receivers (test/reliability/). Not part of `npm test`: it takes minutes. Files end in `.reliability.ts` so the
 * main config (`*.test.ts`) never picks them up.
 *
 * Two groups, one after the other: the fault scenarios two files at a time (this is a 2-core machine and each
 * scenario runs a daemon process), then the load scenarios alone (the scrape flood; a hundred sources on three
 * replicas). A load scenario measures how the daemon keeps up under a flood; sharing the two cores with another scenario's daemon measured the machine instead (a CI run
 * saw a 5.3 s poll gap under the scrape flood while the outage scenario ran beside it; 1.3 s alone).
 */
const LOAD_SCENARIOS = ['test/reliability/scrape-flood.reliability.ts', 'test/reliability/many-sources.reliability.ts', 'test/reliability/heavy-history-reads.reliability.ts'];

/**
 * Every scenario appends its row here; the global setup prints the table once both groups are done. Named after
 * this (the main vitest) process, as the config is evaluated more than once in it.
 */
const resultsDir = join(tmpdir(), `tw-rel-results-${process.pid}`);
mkdirSync(resultsDir, { recursive: true });
const resultsFile = join(resultsDir, 'results.jsonl');

/**
 * The fault scenarios, longest first, so the two lanes end together (the restart truth is two files, its single node
 * and its cluster, so that its six minutes run on both lanes): the outage scenario waits for real minute
 * boundaries (two minutes), and on a fresh clone (CI) vitest knows no durations and started it last, after the
 * others — a minute of CI spent with one lane idle.
 */
const LONGEST_FIRST = ['restart-truth-cluster', 'restart-truth-single', 'outage-deadline', 'hostile-clients', 'hostile-upstream', 'history-disk-full', 'source-faults', 'kill-restart', 'state-dir'];

class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification): number => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.includes(`/${name}.reliability.ts`));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return Promise.resolve([...files].sort((a, b) => rank(a) - rank(b)));
  }
}

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    testTimeout: 240_000,
    hookTimeout: 60_000,
    pool: 'forks',
    sequence: { sequencer: LongestFirst },
    provide: { reliabilityResultsFile: resultsFile },
    projects: [
      {
        extends: true,
        test: {
          name: 'faults',
          include: ['test/reliability/**/*.reliability.ts'],
          exclude: LOAD_SCENARIOS,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'load',
          include: LOAD_SCENARIOS,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          globalSetup: ['test/reliability/global-setup.ts'],
        },
      },
    ],
  },
});
