import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { ConfigError } from '../base/config-error.js';
import { parseDuration } from '../base/duration.js';
import { formatProblem } from '../base/problem.js';
import { timeZone } from '../base/schema-helpers.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import { discoverFlows } from '../flows/discover-flows.js';
import { calendarCandidates } from '../flows/calendar-candidates.js';
import { flowCsv, flowTable, proposalYaml } from '../flows/flow-report-format.js';
import { FlowSummaries } from '../flows/flow-summary.js';
import { HolidayCalendars } from '../flows/holiday-calendars.js';
import { candidateZones } from '../flows/steadiest-zone.js';
import { loadRuleFiles } from '../rules/load-rules.js';
import { SourceError } from '../source/source-error.js';
import { TransferHistoryClient, type TransfersQuery } from '../source/transfer-history-client.js';
import { systemClock, type Clock } from '../util/clock.js';
import { errorMessage } from '../util/errors.js';
import { createLogger } from '../util/logger.js';
import { redactSecrets } from '../util/redact.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch discover` (contract section 13): reads the successful transfers of a period through the daemon's
 * client, finds the recurring flows and proposes a `missing_file` rule for each, with its evidence. Exit codes:
 * 0 report written · 1 the history could not be read · 2 usage or config error.
 */

export const DISCOVER_FORMATS = ['yaml', 'table', 'json', 'csv'] as const;

const discoverOptionsSchema = z.object({
  config: z.string().min(1),
  source: z.string().optional(),
  since: z.string().default('60d'),
  timezone: timeZone().optional(),
  minOccurrences: z.coerce.number().int().min(2).max(1000).default(8),
  format: z.enum(DISCOVER_FORMATS).default('yaml'),
  out: z.string().min(1).optional(),
});
export type DiscoverCliOptions = z.input<typeof discoverOptionsSchema>;

export interface DiscoverIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  clock: Clock;
  env?: NodeJS.ProcessEnv;
  retryDelay?: (attempt: number, retryAfterMs?: number) => number;
}

export async function runDiscover(rawOptions: unknown, io: DiscoverIo): Promise<number> {
  const parsed = discoverOptionsSchema.safeParse(rawOptions);
  if (!parsed.success) {
    io.stderr.write(`discover: ${parsed.error.issues.map((i) => `--${i.path.join('.').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${i.message}`).join('; ')}\n`);
    return EXIT_USAGE;
  }
  const o = parsed.data;
  let since: number;
  try {
    since = parseDuration(o.since);
    if (since <= 0) throw new Error('must be greater than 0');
  } catch (err) {
    io.stderr.write(`discover: --since: ${errorMessage(err)}\n`);
    return EXIT_USAGE;
  }
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(o.config, { env: io.env ?? process.env });
  } catch (err) {
    if (err instanceof ConfigError) for (const p of err.problems) io.stderr.write(`${formatProblem(p)}\n`);
    else io.stderr.write(`discover: ${errorMessage(err)}\n`);
    return EXIT_USAGE;
  }
  const { config } = loaded;
  const sources = o.source === undefined ? config.sources : config.sources.filter((s) => s.name === o.source);
  if (sources.length === 0) {
    io.stderr.write(`discover: no source named "${o.source ?? ''}" (configured: ${config.sources.map((s) => s.name).join(', ')})\n`);
    return EXIT_USAGE;
  }
  const rules = await loadRuleFiles(config.rule_files, loaded.dir, { calendars: new Set(Object.keys(config.calendars)) });
  if (rules.problems.length > 0) {
    for (const p of rules.problems) io.stderr.write(`${formatProblem(p)}\n`);
    return EXIT_USAGE;
  }

  const until = io.clock.now();
  const start = until - since;
  const summaries = new FlowSummaries();
  const logger = createLogger({ level: config.log.level, destination: { write: (line: string) => void io.stderr.write(line) } });
  const progress = io.stderr.isTTY === true;
  let read = 0;
  let lastProgress = 0;
  for (const source of sources) {
    const client = new TransferHistoryClient({ source, logger, ...(io.retryDelay ? { retryDelay: io.retryDelay } : {}) });
    const base: TransfersQuery = { start, end: until, limit: config.poll.page_size, results: 0, ...(source.tags !== '' ? { tags: source.tags } : {}) };
    const queries = source.instances.length === 0 ? [base] : source.instances.map((instance) => ({ ...base, instance }));
    try {
      for (const query of queries) {
        // In the windows of poll.max_window, as the daemon reads: one query over months of a dense service ran into
        // the per-window cap (sources[].max_records_per_window) and ended the whole read (issue 52). Memory stays
        // that of the flows: each page is folded into the summaries and dropped.
        for (const window of readWindows(start, until, config.poll.max_window)) {
          for await (const page of client.pages({ ...query, start: window.start, end: window.end })) {
            for (const t of page.transfers) summaries.add(t);
            read += page.transfers.length;
            if (progress && read - lastProgress >= 1000) {
              lastProgress = read;
              io.stderr.write(`\r\x1b[Kread ${read} transfers from ${source.name} (up to ${new Date(window.end).toISOString().slice(0, 16)}Z), ${summaries.size} flows so far…`);
            }
          }
        }
      }
    } catch (err) {
      if (progress) io.stderr.write('\r\x1b[K');
      const reason = err instanceof SourceError ? `${err.reason}: ` : '';
      io.stderr.write(`discover: reading ${source.name} failed after ${read} transfers: ${reason}${redactSecrets(errorMessage(err), loaded.secrets)}\n`);
      return EXIT_FAILURE;
    }
  }
  if (progress) io.stderr.write('\r\x1b[K');

  const timezone = o.timezone ?? config.display_timezone;
  // What the proposal lacks, said before it is reviewed (issue 52): deadlines in UTC where the partners keep local
  // time, and no business calendar to skip holidays with.
  if (timezone === 'UTC') io.stderr.write('discover: note: the deadlines are proposed in UTC (set display_timezone: in the config, or --timezone ZONE, for the zone your partners keep)\n');
  if (Object.keys(config.calendars).length === 0) io.stderr.write('discover: note: no business calendar is configured (calendars: in the config): where flows skip public holidays, the calendar is inferred from the holiday library and the YAML to add is in the proposal\n');
  const report = discoverFlows(summaries.all(), {
    since: start,
    until,
    timezone,
    zones: candidateZones([{ timezone: config.display_timezone }, ...rules.rules]),
    minOccurrences: o.minOccurrences,
    calendars: calendarCandidates(config.calendars),
    holidays: new HolidayCalendars(),
    rules: rules.rules,
    severalSources: config.sources.length > 1,
    transfersRead: read,
  });
  let text: string;
  switch (o.format) {
    case 'json':
      text = `${JSON.stringify(report, null, 2)}\n`;
      break;
    case 'table':
      text = flowTable(report);
      break;
    case 'csv':
      text = flowCsv(report);
      break;
    case 'yaml':
      text = proposalYaml(report, { unwatchedOnly: true, by: 'transfer-watch discover' });
      break;
  }
  if (o.out !== undefined) {
    await writeFile(o.out, text);
    io.stderr.write(`discover: ${report.flows.length} recurring flows, written to ${o.out}\n`);
  } else {
    io.stdout.write(text);
  }
  return EXIT_OK;
}

export function registerDiscover(program: Command): void {
  program
    .command('discover')
    .description('find the recurring flows in the successful transfers of a period and propose a missing_file rule for each')
    .requiredOption('-c, --config <file>', 'config file (YAML): its sources, calendars and rules')
    .option('--source <name>', 'read only this configured source (default: every source)')
    .option('--since <duration>', 'look back this long from now', '60d')
    .option('--timezone <zone>', "the proposed deadlines' time zone (IANA name; default: the config's display_timezone)")
    .option('--min-occurrences <n>', 'scheduled periods a flow must have been seen in to be recurring', '8')
    .addOption(new Option('--format <format>', 'output: a rule file to review, a table, JSON or CSV').choices(DISCOVER_FORMATS).default('yaml'))
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (opts: unknown) => {
      process.exitCode = await runDiscover(opts, { stdout: process.stdout, stderr: process.stderr, clock: systemClock });
    });
}

/** [start, end] windows (both ends inclusive, as the service reads them) covering [from, until], each at most `step` long. */
export function readWindows(from: number, until: number, step: number): Array<{ start: number; end: number }> {
  const windows: Array<{ start: number; end: number }> = [];
  for (let start = from; start <= until; start += step + 1) windows.push({ start, end: Math.min(until, start + step) });
  return windows;
}
