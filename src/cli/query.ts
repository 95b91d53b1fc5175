import { csvLine } from '../base/csv.js';
import { textTable } from '../base/text-table.js';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { ConfigError } from '../base/config-error.js';
import { parseDuration } from '../base/duration.js';
import { timeZone } from '../base/schema-helpers.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import { formatProblem } from '../base/problem.js';
import type { SourceConfig } from '../config/schema.js';
import { parseServiceTime } from '../source/service-time.js';
import { SourceError } from '../source/source-error.js';
import { TransferHistoryClient, type TransfersQuery } from '../source/transfer-history-client.js';
import type { ServiceRecord, Transfer } from '../source/transfer.js';
import { systemClock, type Clock } from '../util/clock.js';
import { errorMessage } from '../util/errors.js';
import { formatCellTime, formatTime } from '../util/format-time.js';
import { createLogger } from '../util/logger.js';
import { redactSecrets } from '../util/redact.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch query` (contract section 1): a one-shot history query through the daemon's own client.
 * Exit codes: 0 every record printed · 1 the query failed (reason on stderr) · 2 usage or config error.
 */

export const QUERY_FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type QueryFormat = (typeof QUERY_FORMATS)[number];

/** The command's options after commander, parsed rather than trusted. */
const queryOptionsSchema = z.object({
  config: z.string().min(1),
  source: z.string().optional(),
  since: z.string().optional(),
  start: z.string().optional(),
  end: z.string().optional(),
  failed: z.boolean().optional(),
  succeeded: z.boolean().optional(),
  instance: z.string().optional(),
  user: z.string().optional(),
  file: z.string().optional(),
  /** Repeatable: `--event transmission --event reception` (the interface's `events` parameter, repeated). */
  event: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (typeof v === 'string' ? [v] : v))
    .optional(),
  /** Passed as the `tags` parameter as given; overrides the source's `tags`. */
  tags: z.string().optional(),
  /** Page size (`limit`), 1..1000; default `poll.page_size`. */
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  format: z.enum(QUERY_FORMATS).default('table'),
  /** The zone of the table's times; default: the config's `display_timezone` (the pages' and messages' zone). */
  timezone: timeZone().optional(),
});
export type QueryOptions = z.input<typeof queryOptionsSchema>;

export interface QueryIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  clock: Clock;
  env?: NodeJS.ProcessEnv;
  /** Backoff between retries; tests pass `() => 0`. */
  retryDelay?: (attempt: number, retryAfterMs?: number) => number;
}

const DEFAULT_SINCE = '1h';
const EVENT_CODES: Readonly<Record<string, number>> = { transmission: 5, reception: 7 };

/** The service's field names, in the order of the interface; the CSV header and JSON key order. */
const FIELDS = [
  'DATAHORA', 'INSTANCE', 'USUARIO', 'CONEXAO', 'DATAARQUIVO', 'EVENTO', 'HORAARQUIVO', 'MAXTAMREG', 'NUMREG', 'MENSAGEM',
  'NOMEARQUIVO', 'TAGS', 'PROCID', 'REDE', 'RESULTADO', 'TAMARQUIVO', 'THREADID', 'TIPOREC', 'DIAS',
] as const satisfies ReadonlyArray<keyof ServiceRecord>;

class UsageError extends Error {}

/** Runs the query and returns the exit code. `rawOptions` is parsed here (commander's output, or a test's QueryOptions). */
export async function runQuery(rawOptions: unknown, io: QueryIo): Promise<number> {
  const parsedOptions = queryOptionsSchema.safeParse(rawOptions);
  if (!parsedOptions.success) {
    io.stderr.write(`query: ${parsedOptions.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}\n`);
    return EXIT_USAGE;
  }
  const options = parsedOptions.data;

  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(options.config, { env: io.env ?? process.env });
  } catch (err) {
    if (err instanceof ConfigError) for (const p of err.problems) io.stderr.write(`${formatProblem(p)}\n`);
    else io.stderr.write(`query: ${errorMessage(err)}\n`);
    return EXIT_USAGE;
  }

  let source: SourceConfig;
  let queries: TransfersQuery[];
  try {
    source = pickSource(loaded, options.source);
    queries = buildQueries(options, source, loaded.config.poll.page_size, io.clock.now());
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`query: ${err.message}\n`);
    return EXIT_USAGE;
  }

  const logger = createLogger({ level: loaded.config.log.level, destination: { write: (line: string) => void io.stderr.write(line) } });
  const client = new TransferHistoryClient({ source, logger, ...(io.retryDelay ? { retryDelay: io.retryDelay } : {}) });
  const output = outputFor(options.format, io.stdout, options.timezone ?? loaded.config.display_timezone);
  const progress = io.stderr.isTTY === true;
  let fetched = 0;
  let invalid = 0;
  let dropped = 0;
  try {
    for (const query of queries) {
      for await (const page of client.pages(query)) {
        output.add(page.transfers);
        fetched += page.transfers.length;
        invalid += page.invalid;
        dropped += page.dropped;
        if (progress) io.stderr.write(`\r\x1b[Kfetched ${fetched} transfers from ${source.name}…`);
      }
    }
  } catch (err) {
    if (progress) io.stderr.write('\r\x1b[K');
    const reason = err instanceof SourceError ? `${err.reason}: ` : '';
    io.stderr.write(`query failed after ${fetched} transfers: ${reason}${redactSecrets(errorMessage(err), loaded.secrets)}\n`);
    return EXIT_FAILURE;
  }
  if (progress) io.stderr.write('\r\x1b[K');
  const first = queries[0];
  output.end(first ? { start: first.start, end: first.end, source: source.name } : undefined);
  if (invalid > 0) io.stderr.write(`query: ${invalid} unreadable records skipped\n`);
  if (dropped > 0) io.stderr.write(`query: ${dropped} records outside the filters dropped (the service ignored a filter)\n`);
  return EXIT_OK;
}

function pickSource(loaded: LoadedConfig, name: string | undefined): SourceConfig {
  const { sources } = loaded.config;
  const source = name === undefined ? sources[0] : sources.find((s) => s.name === name);
  if (!source) throw new UsageError(`no source named "${name ?? ''}" (configured: ${sources.map((s) => s.name).join(', ')})`);
  return source;
}

/** A time given on the command line: ISO 8601 date-time (no zone = UTC) or a plain date (midnight UTC). */
function parseCliTime(flag: string, text: string): number {
  const ms = parseServiceTime(/^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? `${text.trim()}T00:00:00Z` : text);
  if (ms === undefined) throw new UsageError(`${flag} "${text}" is not an ISO 8601 date-time (e.g. 2024-05-01T12:00:00Z)`);
  return ms;
}

/** One query per configured instance when the source lists some and --instance is not given, like the daemon. */
export function buildQueries(
  options: z.output<typeof queryOptionsSchema>,
  source: SourceConfig,
  pageSize: number,
  now: number,
): TransfersQuery[] {
  if (options.failed && options.succeeded) throw new UsageError('--failed and --succeeded exclude each other');
  if (options.since !== undefined && (options.start !== undefined || options.end !== undefined)) {
    throw new UsageError('use either --since or --start/--end');
  }
  if ((options.start === undefined) !== (options.end === undefined)) throw new UsageError('--start and --end go together');
  let start: number;
  let end: number;
  if (options.start !== undefined && options.end !== undefined) {
    start = parseCliTime('--start', options.start);
    end = parseCliTime('--end', options.end);
    if (start > end) throw new UsageError('--start is after --end');
  } else {
    let since: number;
    try {
      since = parseDuration(options.since ?? DEFAULT_SINCE);
    } catch (err) {
      throw new UsageError(`--since: ${errorMessage(err)}`);
    }
    if (since <= 0) throw new UsageError('--since must be greater than 0');
    end = now;
    start = now - since;
  }
  let events: number[] | undefined;
  if (options.event !== undefined && options.event.length > 0) {
    events = [
      ...new Set(
        options.event.map((event) => {
          const code = EVENT_CODES[event] ?? (/^\d+$/.test(event) ? Number(event) : undefined);
          if (code === undefined) throw new UsageError(`--event must be transmission or reception, not "${event}"`);
          return code;
        }),
      ),
    ];
  }
  const tags = options.tags ?? source.tags;
  const base: TransfersQuery = {
    start,
    end,
    limit: options.limit ?? pageSize,
    ...(options.failed ? { results: -1 as const } : options.succeeded ? { results: 0 as const } : {}),
    ...(options.user !== undefined ? { user: options.user } : {}),
    ...(options.file !== undefined ? { filename: options.file } : {}),
    ...(tags !== '' ? { tags } : {}),
    ...(events ? { events } : {}),
  };
  const instances = options.instance !== undefined ? [options.instance] : source.instances;
  return instances.length === 0 ? [base] : instances.map((instance) => ({ ...base, instance }));
}

interface Output {
  add(transfers: Transfer[]): void;
  end(window?: { start: number; end: number; source: string }): void;
}

function outputFor(format: QueryFormat, stdout: QueryIo['stdout'], zone: string): Output {
  switch (format) {
    case 'ndjson':
      return {
        add: (ts) => {
          if (ts.length > 0) stdout.write(ts.map((t) => `${JSON.stringify(orderedRecord(t.record))}\n`).join(''));
        },
        end: () => undefined,
      };
    case 'csv': {
      let header = false;
      const writeHeader = (): void => {
        if (!header) stdout.write(`${FIELDS.join(',')}\r\n`);
        header = true;
      };
      return {
        add: (ts) => {
          writeHeader();
          if (ts.length > 0) stdout.write(ts.map((t) => csvRow(t.record)).join(''));
        },
        end: writeHeader,
      };
    }
    case 'json': {
      // Buffered: a failed query must not leave half a JSON document on stdout.
      const all: Transfer[] = [];
      return {
        add: (ts) => void all.push(...ts),
        end: () => void stdout.write(`${JSON.stringify(all.map((t) => orderedRecord(t.record)), null, 2)}\n`),
      };
    }
    case 'table': {
      const all: Transfer[] = [];
      return {
        add: (ts) => void all.push(...ts),
        end: (window) => void stdout.write(formatTable(all, zone, window)),
      };
    }
  }
}

function orderedRecord(record: ServiceRecord): Record<string, string | number | null> {
  return Object.fromEntries(FIELDS.map((f) => [f, record[f]]));
}

function csvRow(record: ServiceRecord): string {
  return csvLine(FIELDS.map((f) => record[f]));
}

/**
 * Values come from the monitored service: control characters (a newline, or an ESC sequence that would
 * drive the terminal) are shown as visible escapes so one row stays one line and nothing is executed.
 */
function printable(text: string, max = 120): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** The table people read, its times in `zone` (the header names it), as the status page and messages show them. */
function formatTable(transfers: Transfer[], zone: string, window?: { start: number; end: number; source: string }): string {
  const header = [`TIME (${zone})`, 'INSTANCE', 'USER', 'EVENT', 'RESULT', 'CODE', 'SIZE', 'FILE', 'MESSAGE'];
  const rows = transfers.map((t) => [
    formatCellTime(t.time, zone),
    printable(t.instance),
    printable(t.user),
    printable(t.event),
    t.result,
    String(t.code),
    String(t.size),
    printable(t.file),
    printable(t.message),
  ]);
  const span = window ? ` from ${window.source} between ${formatTime(window.start, zone)} and ${formatTime(window.end, zone)}` : '';
  const summary = `${transfers.length} transfer${transfers.length === 1 ? '' : 's'}${span}\n`;
  if (rows.length === 0) return summary;
  return `${textTable(header, rows)}\n\n${summary}`;
}

export function registerQuery(program: Command): void {
  program
    .command('query')
    .description('one-shot transfer history query through the same client the daemon uses (all pages)')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .option('--source <name>', 'configured source to query (default: the first)')
    .addOption(new Option('--since <duration>', `look back this long from now (default ${DEFAULT_SINCE})`).conflicts(['start', 'end']))
    .option('--start <iso>', 'window start, ISO 8601 (no zone = UTC); with --end')
    .option('--end <iso>', 'window end, ISO 8601 (no zone = UTC); with --start')
    .addOption(new Option('--failed', 'failed transfers only').conflicts('succeeded'))
    .option('--succeeded', 'successful transfers only')
    .option('--instance <name>', 'MFT instance')
    .option('--user <name>', 'user (mailbox)')
    .option('--file <name>', 'file name')
    .option('--event <kind>', 'transmission or reception; repeat for both', (value: string, previous: string[] = []) => [...previous, value])
    .option('--tags <tags>', "the interface's tags parameter, as given (default: the source's tags)")
    .option('--limit <n>', 'page size, 1..1000 (default: poll.page_size)')
    .addOption(new Option('--format <format>', 'output format').choices(QUERY_FORMATS).default('table'))
    .option('--timezone <zone>', "the table's time zone (IANA name; default: the config's display_timezone)")
    .action(async (opts: unknown) => {
      // Writing to a closed pipe (`| head`) is not a failure of the query.
      process.stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT_OK);
      });
      process.exitCode = await runQuery(opts, { stdout: process.stdout, stderr: process.stderr, clock: systemClock });
    });
}
