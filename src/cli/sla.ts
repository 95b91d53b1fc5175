import type { Command } from 'commander';
import { z } from 'zod';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { connection, daemonClient, unreachable, withConnection, type ConnectionFlags, type DaemonClientOptions } from './daemon-http-client.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { terminalCell } from './history.js';
import { reportTableCells } from '../sla/sla-report.js';
import { latenessText } from '../sla/lateness-text.js';
import { keyFromPairs, keyText } from '../sla/occurrence.js';

/**
 * `transfer-watch sla report|occurrences|excuse`: a client of a running daemon's /api/v1/sla/* (contract section
 * 11), with the same connection flags and authentication as `silence`.
 */

export const SLA_FORMATS = ['table', 'csv', 'json'] as const;
type Format = (typeof SLA_FORMATS)[number];

// Loose: the CLI's JSON carries every field the API answers (evidence, trend figures), not only the ones its table reads.
const rowSchema = z.looseObject({
  rule: z.string(),
  key: z.record(z.string(), z.string()),
  timezone: z.string(),
  on_time: z.number(),
  late: z.number(),
  missing: z.number(),
  excused: z.number(),
  no_data: z.number(),
  on_time_ratio: z.number().nullable(),
  objective: z.number().nullable(),
  budget_remaining: z.number().nullable(),
  lateness_p95_seconds: z.number().nullable(),
  // Coverage (contract section 11a); absent from a daemon of an earlier version.
  monitored_from: z.string().nullable().default(null),
  due: z.number().nullable().default(null),
  coverage: z.number().nullable().default(null),
});
const occurrenceSchema = z.looseObject({
  rule: z.string(),
  key: z.record(z.string(), z.string()),
  local_date: z.string(),
  deadline: z.string(),
  outcome: z.string(),
  arrived_at: z.string().nullable(),
  lateness_seconds: z.number().nullable(),
  excuse: z.object({ by: z.string(), reason: z.string() }).nullable(),
});

const dayExcuseSchema = z.object({
  excused: z.array(z.object({ deadline: z.string(), outcome: z.string() })),
  not_excused: z.array(z.object({ deadline: z.string(), outcome: z.string() })),
});

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** How long `sla rejudge` waits for the daemon's answer (it reads the span from the service first). */
const REJUDGE_TIMEOUT_MS = 30 * 60_000;

const rejudgeAnswer = z.looseObject({
  from: z.string(),
  to: z.string(),
  rules: z.array(z.string()),
  judged: z.number(),
  open: z.number(),
  changed: z.number(),
  changes: z.array(z.object({ rule: z.string(), key: z.record(z.string(), z.string()), local_date: z.string(), deadline: z.string(), was: z.string().nullable(), now: z.string() })),
});

/** A re-judgement as a person reads it: what was judged, how many changed, and each change. */
export function rejudgeText(text: string): string {
  const a = rejudgeAnswer.parse(JSON.parse(text));
  const head = `re-judged ${a.judged} occurrence(s) of ${a.rules.join(', ')} from ${a.from} to ${a.to}: ${a.changed} changed${a.open > 0 ? `, ${a.open} still open (left to the live rules)` : ''}\n`;
  if (a.changes.length === 0) return head;
  const rows = [['RULE', 'KEY', 'DATE', 'DEADLINE', 'WAS', 'NOW'], ...a.changes.map((c) => [c.rule, keyText(c.key), c.local_date, c.deadline, c.was ?? '(none)', c.now])];
  return head + table(rows) + (a.changed > a.changes.length ? `… and ${a.changed - a.changes.length} more (--format json lists the first ${a.changes.length})\n` : '');
}

export class SlaRequestError extends TransferWatchError {
  constructor(message: string) {
    super('sla_request', message);
    this.name = 'SlaRequestError';
  }
}

async function call(client: DaemonClientOptions, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ text: string; headers: Record<string, unknown> }> {
  const http = daemonClient(client);
  let res;
  try {
    res = await http.http(`${http.base}${path}`, { method, ...(body === undefined ? {} : { json: body }) });
  } catch (err) {
    throw unreachable(http.base, err);
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    let detail = res.body.slice(0, 200);
    try {
      const parsed = z.object({ error: z.string() }).safeParse(JSON.parse(res.body));
      if (parsed.success) detail = parsed.data.error;
    } catch {
      /* not JSON: the text as it came */
    }
    throw new SlaRequestError(`${method} ${http.base}${path.split('?')[0] ?? ''}: HTTP ${res.statusCode}: ${detail}`);
  }
  return { text: res.body, headers: res.headers };
}

function table(rows: string[][]): string {
  const safe = rows.map((r) => r.map(terminalCell));
  const widths = safe[0]?.map((_, i) => Math.max(...safe.map((r) => (r[i] ?? '').length))) ?? [];
  return safe.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}

export async function slaReport(client: DaemonClientOptions, o: { from: string; to: string; rule?: string | undefined; format: Format }): Promise<string> {
  const q = new URLSearchParams({ from: o.from, to: o.to, ...(o.rule ? { rule: o.rule } : {}), ...(o.format === 'csv' ? { format: 'csv' } : {}) });
  const { text } = await call(client, 'GET', `/api/v1/sla/report?${q.toString()}`);
  if (o.format === 'csv') return text;
  const answer = z.looseObject({ rows: z.array(rowSchema) }).parse(JSON.parse(text));
  const rows = answer.rows;
  if (o.format === 'json') return `${JSON.stringify({ ...answer, from: o.from, to: o.to, rows }, null, 2)}\n`;
  return table(reportTableCells(rows, '–'));
}

export async function slaOccurrences(client: DaemonClientOptions, o: { from: string; to: string; rule?: string | undefined; outcome?: string | undefined; format: Format }): Promise<string> {
  const q = new URLSearchParams({ from: o.from, to: o.to, ...(o.rule ? { rule: o.rule } : {}), ...(o.outcome ? { outcome: o.outcome } : {}), ...(o.format === 'csv' ? { format: 'csv' } : {}) });
  const { text } = await call(client, 'GET', `/api/v1/sla/occurrences?${q.toString()}`);
  if (o.format === 'csv') return text;
  const answer = z.looseObject({ occurrences: z.array(occurrenceSchema) }).parse(JSON.parse(text));
  const list = answer.occurrences;
  if (o.format === 'json') return `${JSON.stringify({ ...answer, occurrences: list }, null, 2)}\n`;
  return table([
    ['DATE', 'DEADLINE', 'RULE', 'KEY', 'OUTCOME', 'ARRIVED', 'LATE BY', 'EXCUSE'],
    ...list.map((x) => [
      x.local_date,
      x.deadline,
      x.rule,
      keyText(x.key),
      x.outcome,
      x.arrived_at ?? '–',
      x.lateness_seconds === null ? '–' : latenessText(x.lateness_seconds),
      x.excuse ? `${x.excuse.by}: ${x.excuse.reason}` : '',
    ]),
  ]);
}

function parseKey(pairs: string[]): Record<string, string> {
  const parsed = keyFromPairs(pairs);
  if ('malformed' in parsed) throw new TransferWatchError('invalid_key', `--key "${parsed.malformed}" must be LABEL=VALUE`);
  return parsed.key;
}

function fail(err: unknown): void {
  process.stderr.write(`sla: ${errorMessage(err)}\n`);
  process.exitCode = err instanceof SlaRequestError ? EXIT_FAILURE : EXIT_USAGE;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
function dates(o: { from?: string; to?: string; month?: string }): { from: string; to: string } {
  if (o.month !== undefined) {
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(o.month)) throw new TransferWatchError('invalid_month', `--month "${o.month}" must be YYYY-MM`);
    const [y, m] = o.month.split('-').map(Number) as [number, number];
    const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
    return { from: `${o.month}-01`, to: `${o.month}-${String(last).padStart(2, '0')}` };
  }
  if (o.from === undefined || o.to === undefined) throw new TransferWatchError('invalid_range', 'give --month YYYY-MM, or --from and --to as YYYY-MM-DD');
  if (!DATE.test(o.from) || !DATE.test(o.to)) throw new TransferWatchError('invalid_range', '--from and --to are dates as YYYY-MM-DD');
  return { from: o.from, to: o.to };
}

function checkFormat(f: string): Format {
  if (!(SLA_FORMATS as readonly string[]).includes(f)) throw new TransferWatchError('invalid_format', `--format must be one of ${SLA_FORMATS.join(', ')}`);
  return f as Format;
}

export function registerSla(program: Command): void {
  const sla = program.command('sla').description('the SLA ledger of expected files on a running daemon: reports, occurrences, excuses');
  const range = (cmd: Command): Command =>
    withConnection(cmd)
      .option('--month <YYYY-MM>', 'a calendar month (local dates in each rule\'s time zone)')
      .option('--from <date>', 'first local date, YYYY-MM-DD')
      .option('--to <date>', 'last local date, YYYY-MM-DD (inclusive)')
      .option('--rule <name>', 'one rule')
      .option('--format <format>', `output: ${SLA_FORMATS.join(', ')}`, 'table');

  range(sla.command('report').description('on-time rate, late, missing and excused per rule and key, against the objective')).action(
    async (o: ConnectionFlags & { month?: string; from?: string; to?: string; rule?: string; format: string }) => {
      try {
        process.stdout.write(await slaReport(connection(o), { ...dates(o), rule: o.rule, format: checkFormat(o.format) }));
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    },
  );
  range(sla.command('occurrences').description('every occurrence of the expected files, with its outcome and evidence'))
    .option('--outcome <outcome>', 'on_time, late, missing, excused or no_data')
    .action(async (o: ConnectionFlags & { month?: string; from?: string; to?: string; rule?: string; outcome?: string; format: string }) => {
      try {
        process.stdout.write(await slaOccurrences(connection(o), { ...dates(o), rule: o.rule, outcome: o.outcome, format: checkFormat(o.format) }));
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });
  withConnection(sla.command('rejudge').description('re-decide a span of the ledger from the service history (occurrences closed by now; excuses kept); recorded as an event'))
    .requiredOption('--from <date>', 'first local date, YYYY-MM-DD')
    .requiredOption('--to <date>', 'last local date, YYYY-MM-DD (inclusive)')
    .option('--rule <name>', 'one missing_file rule (default: every one)')
    .option('--reason <text>', 'why, kept with the event')
    .option('--by <name>', 'who asks (default: the authenticated user, else $USER)')
    .option('--format <format>', 'output: table or json', 'table')
    .action(async (o: ConnectionFlags & { from: string; to: string; rule?: string; reason?: string; by?: string; format: string }) => {
      try {
        const { from, to } = dates(o);
        if (o.format !== 'table' && o.format !== 'json') throw new TransferWatchError('invalid_format', '--format must be table or json');
        const conn = connection(o);
        const by = o.by ?? daemonClient(conn).user ?? process.env.USER ?? 'transfer-watch';
        // Reading the span from the service takes as long as the service takes: minutes for a dense one.
        const res = await call({ ...conn, timeoutMs: REJUDGE_TIMEOUT_MS }, 'POST', '/api/v1/sla/rejudge', { from, to, by, ...(o.rule ? { rule: o.rule } : {}), ...(o.reason ? { reason: o.reason } : {}) });
        process.stdout.write(o.format === 'json' ? res.text : rejudgeText(res.text));
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });
  withConnection(sla.command('backfill').description('the SLA backfill on a running daemon: --retry reads again now the source windows it gave up'))
    .requiredOption('--retry', 'read again the windows the backfill gave up (also done at every start and every sla.backfill_retry)')
    .action(async (o: ConnectionFlags) => {
      try {
        const res = await call({ ...connection(o), timeoutMs: REJUDGE_TIMEOUT_MS }, 'POST', '/api/v1/sla/backfill/retry');
        const r = z.object({ windows: z.number(), read: z.number(), failing: z.number(), dropped: z.number(), replaced: z.number() }).parse(JSON.parse(res.text));
        process.stdout.write(
          r.windows === 0
            ? 'no window given up: nothing to read again\n'
            : `${r.windows} window(s) given up: ${r.read} read at last (${r.replaced} no_data occurrence(s) decided), ${r.failing} failing still (read again at the next sla.backfill_retry)${r.dropped > 0 ? `, ${r.dropped} older than sla.backfill (not read again)` : ''}\n`,
        );
        process.exitCode = r.failing > 0 ? EXIT_FAILURE : EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });
  withConnection(sla.command('excuse').description('excuse an occurrence (it leaves the denominator), or withdraw an excuse with --withdraw'))
    .requiredOption('--rule <name>', 'the missing_file rule')
    .requiredOption('--date <YYYY-MM-DD>', 'the local date of the occurrence')
    .option('--key <LABEL=VALUE>', 'the expected key (for_each), repeatable', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--reason <text>', 'why (required to excuse)')
    .option('--by <name>', 'who excuses (default: the authenticated user, else $USER)')
    .option('--deadline <rfc3339>', 'one deadline of the day (e.g. 2026-11-25T08:00:00-03:00); without it every deadline of the date')
    .option('--withdraw', 'withdraw the excuse instead')
    .action(async (o: ConnectionFlags & { rule: string; date: string; key: string[]; reason?: string; by?: string; deadline?: string; withdraw?: boolean }) => {
      try {
        const key = parseKey(o.key);
        const conn = connection(o);
        if (o.withdraw) {
          const by = o.by ?? daemonClient(conn).user ?? process.env.USER ?? 'transfer-watch';
          const q = new URLSearchParams({ rule: o.rule, local_date: o.date, by, ...(o.deadline ? { deadline: o.deadline } : {}), ...(o.reason ? { reason: o.reason } : {}) });
          for (const [l, v] of Object.entries(key)) q.append('key', `${l}=${v}`);
          await call(conn, 'DELETE', `/api/v1/sla/excuses?${q.toString()}`);
          process.stdout.write(`withdrawn\n`);
        } else {
          if (!o.reason) throw new TransferWatchError('invalid_reason', '--reason is required to excuse an occurrence');
          const by = o.by ?? daemonClient(conn).user ?? process.env.USER ?? 'transfer-watch';
          const res = await call(conn, 'POST', '/api/v1/sla/excuses', { rule: o.rule, key, local_date: o.date, reason: o.reason, by, ...(o.deadline ? { deadline: o.deadline } : {}) });
          process.stdout.write(`excused ${o.rule}${Object.keys(key).length ? ` ${keyText(key)}` : ''} on ${o.date}${o.deadline ? ` (deadline ${o.deadline})` : ''}\n`);
          // A whole day's excuse takes only the deadlines that were not on time: which it took, and which not.
          const day = dayExcuseSchema.safeParse(parseJson(res.text));
          if (day.success) {
            for (const d of day.data.excused) process.stdout.write(`  excused     ${d.deadline} (${d.outcome})\n`);
            for (const d of day.data.not_excused) process.stdout.write(`  not excused ${d.deadline} (on time)\n`);
          }
        }
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });
}
