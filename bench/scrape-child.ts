/**
 * Child process of the scrape-during-a-backfill line: the pipeline and `/metrics` in one process started as the
 * daemon is (the parent passes the image's node flags; V8's heap growth and young generation limited here as the
 * CLI limits them, src/util/heap-growth.ts), so the garbage collection a scrape meets is the daemon's. The page
 * server runs in the parent's child. Prints one JSON line: the result.
 */
import { z } from 'zod';
import { applyHeapSettings } from '../src/util/heap-growth.js';
import { createPipeline, daemonWindows } from './bench-pipeline.js';
import { benchRules } from './bench-rules.js';
import { measureScrapeUnderLoad } from './bench-scrape.js';

// As the CLI does before any command runs.
applyHeapSettings();

const input = z
  .object({ url: z.string(), start: z.number(), end: z.number(), series: z.number(), backfills: z.number(), cadence: z.enum(['daemon', 'transfers']) })
  .parse(JSON.parse(process.argv[2] ?? '{}'));
const history = { url: input.url, start: input.start, end: input.end };
// The pipeline's waits use unref'd timers (they must not hold a daemon's shutdown); in the daemon its HTTP server
// keeps the process alive, here this does until the result is printed.
const keepAlive = setInterval(() => undefined, 1000);
// Every page the pipeline asks for once (then served from the page server's cache), and the pipeline's code warm:
// a first pipeline of a process waited for the page server to generate pages, a third of its time, while that
// process took the second core from the scrapes being timed.
await createPipeline(history, benchRules(100), daemonWindows(), undefined, undefined, input.cadence).run();
const result = await measureScrapeUnderLoad(input.series, history, input.cadence, input.backfills);
process.stdout.write(`${JSON.stringify(result)}\n`);
clearInterval(keepAlive);
