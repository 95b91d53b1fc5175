import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TestProject } from 'vitest/node';
import { formatTable, type ScenarioResult } from './harness.js';

/**
 * When the suite ends, prints the table of faults injected and alerts expected, delivered, duplicated and lost
 * that every scenario appended to the shared results file (its path is provided by the config).
 */
export default function setup(project: TestProject): () => void {
  const file = project.config.provide.reliabilityResultsFile;
  if (file === undefined) throw new Error('test/reliability/vitest.config.ts provides no reliabilityResultsFile');
  return () => {
    const rows: ScenarioResult[] = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as ScenarioResult)
      : [];
    rows.sort((a, b) => a.scenario.localeCompare(b.scenario));
    console.log(`\ntransfer-watch reliability suite: ${rows.length} scenarios\n${formatTable(rows)}\n`);
    rmSync(dirname(file), { recursive: true, force: true });
  };
}
