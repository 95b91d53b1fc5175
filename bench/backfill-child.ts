/**
 * Child process of the RSS measurement: the pipeline alone (the simulator runs in the parent), backfilling a
 * dense history with the daemon's default windows (max_window 1h, overlap 2m, page_size 1000), sampling
 * `process.memoryUsage().rss`. V8's heap growth and young generation are limited as `transfer-watch` limits them (src/util/heap-growth.ts). Prints one JSON line: peak RSS and RSS at each quarter of the backfill.
 */
import { applyHeapSettings } from '../src/util/heap-growth.js';
import { createPipeline } from './bench-pipeline.js';
import { benchRules } from './bench-rules.js';

interface ChildInput {
  url: string;
  start: number;
  end: number;
  rules: number;
  expectedRecords: number;
}

// As the CLI does before any command runs, so the figure is the daemon's.
applyHeapSettings();
const input = JSON.parse(process.argv[2] ?? '{}') as ChildInput;
const rules = benchRules(input.rules);
const baselineRss = process.memoryUsage().rss;
let peak = baselineRss;
const quarters: number[] = [];
let handed = 0;
const sample = (): void => {
  const rss = process.memoryUsage().rss;
  if (rss > peak) peak = rss;
};
const timer = setInterval(sample, 50);
const pipeline = createPipeline(input, rules, { max_window: '1h', overlap: '2m' }, () => {
  handed += 1000;
  sample();
  const quarter = Math.floor((handed / input.expectedRecords) * 4);
  while (quarters.length < Math.min(quarter, 4)) quarters.push(process.memoryUsage().rss);
});
const result = await pipeline.run();
sample();
clearInterval(timer);
while (quarters.length < 4) quarters.push(process.memoryUsage().rss);
const mb = (b: number): number => Math.round((b / 1048576) * 10) / 10;
process.stdout.write(
  `${JSON.stringify({
    records: result.records,
    seconds: result.seconds,
    requests: result.requests,
    baselineRssMb: mb(baselineRss),
    peakRssMb: mb(peak),
    quarterRssMb: quarters.map(mb),
    rememberedByRules: pipeline.engine.rememberedTransfers,
  })}\n`,
);
