import type { Command } from 'commander';
import { z } from 'zod';
import { parseDuration } from '../base/duration.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { connection, daemonClient, unreachable, withConnection, type ConnectionFlags, type DaemonClientOptions } from './daemon-http-client.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch silence add|list|expire`: a client of a running daemon's /api/v1/silences.
 * Matchers are Alertmanager's (`alertname="X"`, `mft_instance=~"PROD.*"`) and are checked by the daemon.
 */

const silenceSchema = z.object({
  id: z.string(),
  matchers: z.array(z.object({ name: z.string(), value: z.string(), isRegex: z.boolean(), isEqual: z.boolean() })),
  startsAt: z.string(),
  endsAt: z.string(),
  createdBy: z.string(),
  comment: z.string(),
  status: z.object({ state: z.string() }),
});
type ApiSilence = z.infer<typeof silenceSchema>;

/** The daemon answered with an error status (exit 1), as opposed to not answering at all (exit 2). */
export class SilenceRequestError extends TransferWatchError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super('silence_request', message);
    this.name = 'SilenceRequestError';
  }
}

export type SilenceClientOptions = DaemonClientOptions;

async function request(opts: SilenceClientOptions, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const client = daemonClient(opts);
  const url = `${client.base}${path}`;
  let res;
  try {
    res = await client.http(url, { method, ...(body === undefined ? {} : { json: body }) });
  } catch (err) {
    throw unreachable(client.base, err);
  }
  const text = res.body;
  let parsed: unknown = undefined;
  try {
    parsed = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const detail = z.object({ error: z.string() }).safeParse(parsed);
    throw new SilenceRequestError(`${method} ${url}: HTTP ${res.statusCode}${detail.success ? `: ${detail.data.error}` : text ? `: ${text.slice(0, 200)}` : ''}`, res.statusCode);
  }
  return parsed;
}

/** Accepts a bare silence or one wrapped as `{silence: ...}` / `{silences: [...]}` / `{data: ...}`. */
function unwrap(value: unknown, key: string): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (key in record) return record[key];
    if ('data' in record) return record.data;
  }
  return value;
}

export async function addSilence(
  opts: SilenceClientOptions,
  input: { matchers: string[]; durationMs: number; comment: string; author: string; now: number },
): Promise<ApiSilence> {
  const body = {
    matchers: input.matchers,
    // No startsAt: the daemon starts it at its own "now", so clock skew cannot make it pending.
    endsAt: new Date(input.now + input.durationMs).toISOString(),
    createdBy: input.author,
    comment: input.comment,
  };
  const answer = unwrap(await request(opts, 'POST', '/api/v1/silences', body), 'silence');
  const full = silenceSchema.safeParse(answer);
  if (full.success) return full.data;
  const idOnly = z.object({ silenceID: z.string() }).or(z.object({ id: z.string() })).safeParse(answer);
  if (!idOnly.success) throw new TransferWatchError('silence_response', 'the daemon answered with an unexpected body');
  const id = 'silenceID' in idOnly.data ? idOnly.data.silenceID : idOnly.data.id;
  return { id, matchers: [], startsAt: new Date(input.now).toISOString(), endsAt: body.endsAt, createdBy: body.createdBy, comment: body.comment, status: { state: 'active' } };
}

export async function listSilences(opts: SilenceClientOptions): Promise<ApiSilence[]> {
  const answer = unwrap(await request(opts, 'GET', '/api/v1/silences'), 'silences');
  const parsed = z.array(silenceSchema).safeParse(answer);
  if (!parsed.success) throw new TransferWatchError('silence_response', 'the daemon answered with an unexpected body');
  return parsed.data;
}

export async function expireSilence(opts: SilenceClientOptions, id: string): Promise<void> {
  await request(opts, 'DELETE', `/api/v1/silences/${encodeURIComponent(id)}`);
}

export function formatMatchers(s: ApiSilence): string {
  return s.matchers
    .map((m) => `${m.name}${m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!='}${JSON.stringify(m.value)}`)
    .join(', ');
}

/** A plain table; times are shown in UTC and say so. */
export function formatSilenceTable(silences: readonly ApiSilence[]): string {
  const rows = [['ID', 'STATE', 'ENDS (UTC)', 'CREATED BY', 'MATCHERS', 'COMMENT']];
  for (const s of silences) {
    rows.push([s.id, s.status.state, s.endsAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'), s.createdBy, formatMatchers(s), s.comment.replace(/\s+/g, ' ')]);
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}

function fail(err: unknown): void {
  process.stderr.write(`silence: ${errorMessage(err)}\n`);
  process.exitCode = err instanceof SilenceRequestError ? EXIT_FAILURE : EXIT_USAGE;
}

export function registerSilence(program: Command): void {
  const silence = program.command('silence').description('add, list or expire silences on a running daemon');

  withConnection(
    silence
      .command('add')
      .description('silence the alerts matching every MATCHER (e.g. alertname="DailyStatementMissing")')
      .argument('<matcher...>', 'Alertmanager-style matchers: name="v", name!="v", name=~"re", name!~"re"'),
  )
    .option('--duration <duration>', 'how long the silence lasts (30m, 2h, 1d)', '1h')
    .requiredOption('--comment <text>', 'why (required; shown to everyone)')
    .option('--author <name>', 'who silences (default: the authenticated user, else $USER; a daemon with authentication records its user)')
    .action(async (matchers: string[], o: ConnectionFlags & { duration: string; comment: string; author?: string }) => {
      let durationMs: number;
      try {
        durationMs = parseDuration(o.duration);
        if (durationMs <= 0) throw new TransferWatchError('invalid_duration', 'duration must be greater than 0');
      } catch (err) {
        process.stderr.write(`silence: --duration: ${errorMessage(err)}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      try {
        const conn = connection(o);
        const author = o.author ?? daemonClient(conn).user ?? process.env.USER ?? 'transfer-watch';
        const s = await addSilence(conn, { matchers, durationMs, comment: o.comment, author, now: Date.now() });
        process.stdout.write(`${s.id}\n`);
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });

  withConnection(silence.command('list').description('list the silences of the daemon'))
    .option('--json', 'print JSON instead of a table')
    .action(async (o: ConnectionFlags & { json?: boolean }) => {
      try {
        const list = await listSilences(connection(o));
        process.stdout.write(o.json ? `${JSON.stringify(list, null, 2)}\n` : formatSilenceTable(list));
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });

  withConnection(silence.command('expire').description('end a silence now').argument('<id>', 'silence id (from `silence list`)')).action(
    async (id: string, o: ConnectionFlags) => {
      try {
        await expireSilence(connection(o), id);
        process.stdout.write(`expired ${id}\n`);
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    },
  );
}
