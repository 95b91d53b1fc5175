import { registerHistoryOncall } from './history-oncall.js';
import type { Command } from 'commander';
import { registerHistoryFile } from './history-file.js';
import { z } from 'zod';
import { parseDuration } from '../base/duration.js';
import { timeZone } from '../base/schema-helpers.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { formatCellTime } from '../util/format-time.js';
import { connection, daemonClient, unreachable, withConnection, type ConnectionFlags, type DaemonClientOptions } from './daemon-http-client.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch history alerts|notifications|silences`: a client of a running daemon's /api/v1/history/*
 * (contract section 12), with the same connection flags and authentication as `silence`.
 */

export const HISTORY_KINDS = ['alerts', 'notifications', 'silences'] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];
export const HISTORY_FORMATS = ['table', 'csv', 'json'] as const;
/** Pages followed at most by `--all` (100,000 records at the largest page). */
const MAX_PAGES = 100;

const labels = z.record(z.string(), z.string());
const alertEvent = z.object({ at: z.string(), event: z.string(), fingerprint: z.string(), labels, annotations: labels, silence_id: z.string().nullable(), inhibited_by: z.string().nullable() });
const attempt = z.object({
  at: z.string(),
  receiver: z.string(),
  integration: z.string(),
  status: z.string(),
  fingerprints: z.array(z.string()),
  title: z.string(),
  outcome: z.string(),
  attempt: z.number(),
  error: z.string().nullable(),
  duration_ms: z.number(),
});
const silenceEvent = z.object({ at: z.string(), event: z.string(), silence_id: z.string(), created_by: z.string(), comment: z.string(), starts_at: z.string(), ends_at: z.string() }).passthrough();
const pageSchemas = {
  alerts: z.object({ events: z.array(alertEvent), next: z.string().nullable() }),
  notifications: z.object({ attempts: z.array(attempt), next: z.string().nullable() }),
  silences: z.object({ events: z.array(silenceEvent), next: z.string().nullable() }),
};

export interface HistoryCommandOptions {
  kind: HistoryKind;
  filters: string[];
  from?: number | undefined;
  to?: number | undefined;
  fingerprint?: string | undefined;
  limit: number;
  /** Follow `next` until the range is exhausted. */
  all: boolean;
  format: (typeof HISTORY_FORMATS)[number];
  /** The zone of the table's times; default: the daemon's `display_timezone` (its pages' zone). */
  timezone?: string | undefined;
}

/** The daemon answered with an error status (exit 1). */
export class HistoryRequestError extends TransferWatchError {
  constructor(message: string) {
    super('history_request', message);
    this.name = 'HistoryRequestError';
  }
}

/** Fetch the pages asked for and render them; returns the text to print. */
export async function fetchHistory(client: DaemonClientOptions, o: HistoryCommandOptions): Promise<string> {
  const http = daemonClient(client);
  const rows: unknown[] = [];
  let csv = '';
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = new URLSearchParams();
    for (const f of o.filters) params.append('filter', f);
    if (o.from !== undefined) params.set('from', new Date(o.from).toISOString());
    if (o.to !== undefined) params.set('to', new Date(o.to).toISOString());
    if (o.fingerprint) params.set('fingerprint', o.fingerprint);
    params.set('limit', String(o.limit));
    if (cursor) params.set('cursor', cursor);
    if (o.format === 'csv') params.set('format', 'csv');
    const url = `${http.base}/api/v1/history/${o.kind}?${params.toString()}`;
    let res;
    try {
      res = await http.http(url);
    } catch (err) {
      throw unreachable(http.base, err);
    }
    if (res.statusCode !== 200) {
      const detail = z.object({ error: z.string() }).safeParse(safeJson(res.body));
      throw new HistoryRequestError(`GET ${http.base}/api/v1/history/${o.kind}: HTTP ${res.statusCode}: ${detail.success ? detail.data.error : res.body.slice(0, 200)}`);
    }
    if (o.format === 'csv') {
      // Every page starts with the header; it is printed once.
      csv += page === 0 ? res.body : res.body.slice(res.body.indexOf('\r\n') + 2);
      const next = res.headers['x-next-cursor'];
      cursor = typeof next === 'string' && next !== '' ? next : null;
    } else {
      const parsed = pageSchemas[o.kind].safeParse(safeJson(res.body));
      if (!parsed.success) throw new HistoryRequestError(`the daemon answered with an unexpected body (${parsed.error.issues[0]?.message ?? ''})`);
      rows.push(...('attempts' in parsed.data ? parsed.data.attempts : parsed.data.events));
      cursor = parsed.data.next;
    }
    if (!o.all || cursor === null) break;
  }
  if (o.format === 'csv') return csv;
  const key = o.kind === 'notifications' ? 'attempts' : 'events';
  if (o.format === 'json') return `${JSON.stringify({ [key]: rows, next: cursor }, null, 2)}\n`;
  const zone = o.timezone ?? (await displayZone(http));
  return table(o.kind, rows, zone) + (cursor && !o.all ? `(more: --all, or --to before the oldest shown)\n` : '');
}

/** The daemon's `display_timezone`, from its status (UTC from a daemon too old to say). */
async function displayZone(http: ReturnType<typeof daemonClient>): Promise<string> {
  let res;
  try {
    res = await http.http(`${http.base}/api/v1/status`);
  } catch (err) {
    throw unreachable(http.base, err);
  }
  const status = z.object({ displayTimezone: z.string() }).safeParse(res.statusCode === 200 ? safeJson(res.body) : undefined);
  return status.success && validZone(status.data.displayTimezone) ? status.data.displayTimezone : 'UTC';
}

/** An IANA zone this runtime knows (the config schema's own check). */
function validZone(zone: string): boolean {
  return timeZone().safeParse(zone).success;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A terminal cell: control characters (escape sequences a hostile label could carry) are shown as `\uXXXX`,
 * never interpreted; line breaks fold to a space.
 */
export function terminalCell(value: string): string {
  // Control characters are what this must find.
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const labelText = (l: Record<string, string>): string =>
  Object.keys(l)
    .filter((k) => k !== 'alertname')
    .sort()
    .map((k) => `${k}=${JSON.stringify(l[k] ?? '')}`)
    .join(', ');

/** The table people read, its times in `zone` (the headers name it), as the daemon's pages show them. */
function table(kind: HistoryKind, rows: unknown[], zone: string): string {
  const time = (iso: string): string => {
    const ms = Date.parse(iso);
    return Number.isNaN(ms) ? iso : formatCellTime(ms, zone);
  };
  const at = `AT (${zone})`;
  let lines: string[][];
  if (kind === 'alerts') {
    lines = [[at, 'EVENT', 'ALERTNAME', 'FINGERPRINT', 'LABELS', 'BY']];
    for (const r of rows as Array<z.infer<typeof alertEvent>>) lines.push([time(r.at), r.event, r.labels['alertname'] ?? '', r.fingerprint, labelText(r.labels), r.silence_id ?? r.inhibited_by ?? '']);
  } else if (kind === 'notifications') {
    lines = [[at, 'RECEIVER', 'INTEGRATION', 'STATUS', 'OUTCOME', 'ATTEMPT', 'MS', 'TITLE', 'ERROR']];
    for (const r of rows as Array<z.infer<typeof attempt>>) lines.push([time(r.at), r.receiver, r.integration, r.status, r.outcome, String(r.attempt), String(r.duration_ms), r.title, r.error ?? '']);
  } else {
    lines = [[at, 'EVENT', 'SILENCE', 'BY', `ENDS (${zone})`, 'COMMENT']];
    for (const r of rows as Array<z.infer<typeof silenceEvent>>) lines.push([time(r.at), r.event, r.silence_id, r.created_by, time(r.ends_at), r.comment]);
  }
  const safe = lines.map((l) => l.map(terminalCell));
  const widths = safe[0]?.map((_, i) => Math.max(...safe.map((r) => (r[i] ?? '').length))) ?? [];
  return safe.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}

function timeFlag(name: string, text: string | undefined, now: number): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms) || !/T/.test(text)) throw new TransferWatchError('invalid_time', `--${name}: "${text}" is not an RFC 3339 time (e.g. 2026-11-25T08:00:00Z)`);
  return Math.min(ms, Number.MAX_SAFE_INTEGER, now + 100 * 365 * 86_400_000);
}

export function registerHistory(program: Command): void {
  const history = program.command('history').description('what fired, who was told and when: the history of a running daemon; check, back up and restore its SQLite file');
  registerHistoryFile(history);
  registerHistoryOncall(history);
  for (const kind of HISTORY_KINDS) {
    const what = { alerts: 'alert events (pending, firing, resolved, silenced, inhibited ...)', notifications: 'notification attempts (sent, retrying, failed, gave_up)', silences: 'silence events (created, updated, expired)' }[kind];
    withConnection(history.command(kind).description(`list ${what}, newest first`))
      .option('--filter <matcher>', 'Alertmanager matcher, e.g. alertname="TransferErrorBurst" (repeatable; all must hold)', (v: string, acc: string[]) => [...acc, v], [] as string[])
      .option('--since <duration>', 'from this long ago (24h, 7d)', '24h')
      .option('--from <time>', 'from this RFC 3339 time (instead of --since)')
      .option('--to <time>', 'up to this RFC 3339 time (default: now)')
      .option('--fingerprint <fp>', "one alert's records")
      .option('--limit <n>', 'records per page (1-1000)', '100')
      .option('--all', 'follow the pages to the end of the range')
      .option('--format <format>', `output: ${HISTORY_FORMATS.join(', ')}`, 'table')
      .option('--timezone <zone>', "the table's time zone (IANA name; default: the daemon's display_timezone)")
      .action(async (o: ConnectionFlags & { filter: string[]; since: string; from?: string; to?: string; fingerprint?: string; limit: string; all?: boolean; format: string; timezone?: string }) => {
        let options: HistoryCommandOptions;
        try {
          const now = Date.now();
          if (!(HISTORY_FORMATS as readonly string[]).includes(o.format)) throw new TransferWatchError('invalid_format', `--format must be one of ${HISTORY_FORMATS.join(', ')}`);
          const limit = Number(o.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new TransferWatchError('invalid_limit', '--limit must be a whole number from 1 to 1000');
          const from = timeFlag('from', o.from, now) ?? now - parseDuration(o.since);
          if (o.timezone !== undefined && !validZone(o.timezone)) throw new TransferWatchError('invalid_timezone', `--timezone: "${o.timezone}" is not an IANA time zone (e.g. America/Sao_Paulo)`);
          options = { kind, filters: o.filter, from, to: timeFlag('to', o.to, now), fingerprint: o.fingerprint, limit, all: o.all ?? false, format: o.format as HistoryCommandOptions['format'], timezone: o.timezone };
        } catch (err) {
          process.stderr.write(`history: ${errorMessage(err)}\n`);
          process.exitCode = EXIT_USAGE;
          return;
        }
        try {
          process.stdout.write(await fetchHistory(connection(o), options));
          process.exitCode = EXIT_OK;
        } catch (err) {
          process.stderr.write(`history: ${errorMessage(err)}\n`);
          process.exitCode = err instanceof HistoryRequestError ? EXIT_FAILURE : EXIT_USAGE;
        }
      });
  }
}
