import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { formatTable, type ScenarioResult } from './harness.js';

/**
 * Gives every scenario file the path of a shared results file and, when the suite ends, prints the table of
 * faults injected and alerts expected, delivered, duplicated and lost (also written to RELIABILITY_TABLE when set).
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'tw-rel-results-'));
  const file = join(dir, 'results.jsonl');
  project.provide('reliabilityResultsFile', file);
  return () => {
    const rows: ScenarioResult[] = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as ScenarioResult)
      : [];
    rows.sort((a, b) => a.scenario.localeCompare(b.scenario));
    console.log(`\ntransfer-watch reliability suite: ${rows.length} scenarios\n${formatTable(rows)}\n`);
    rmSync(dir, { recursive: true, force: true });
  };
}
