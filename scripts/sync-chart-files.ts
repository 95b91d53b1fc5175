/**
 * Copies the Grafana dashboard and the Prometheus rules into the Helm chart's files/ (Helm can only read
 * files inside the chart). `npm run chart:sync`; test/packaging/helm-chart.test.ts fails when they differ.
 */
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const CHART_FILE_COPIES: ReadonlyArray<readonly [source: string, copy: string]> = [
  ['grafana/transfer-watch.json', 'helm/transfer-watch/files/transfer-watch.json'],
  ['prometheus/transfer-watch.rules.yaml', 'helm/transfer-watch/files/transfer-watch.rules.yaml'],
];

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [source, copy] of CHART_FILE_COPIES) {
    copyFileSync(path.join(root, source), path.join(root, copy));
    console.log(`copied ${source} to ${copy}`);
  }
}
