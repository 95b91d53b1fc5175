import type { Command } from 'commander';
import { z } from 'zod';
import { errorMessage } from '../util/errors.js';
import { textTable } from '../base/text-table.js';
import { callDaemon, connection, daemonClient, DaemonRequestError, withConnection, type ConnectionFlags, type DaemonClientOptions } from './daemon-http-client.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/**
 * `transfer-watch ack` (contract 14): a client of a running daemon's `/api/v1/acks`. Acknowledges the firing alerts
 * that every `--filter` matcher selects (Alertmanager's syntax, checked by the daemon); `--list` shows the acks,
 * `--undo ID` takes one back.
 */

const ackSchema = z.object({
  id: z.string(),
  fingerprints: z.array(z.string()),
  by: z.string(),
  comment: z.string(),
  at: z.string(),
  state: z.string(),
  endedAt: z.string().nullable(),
  endedBy: z.string().nullable(),
});
export type CliAck = z.infer<typeof ackSchema>;

export async function acknowledge(opts: DaemonClientOptions, input: { filters: string[]; comment: string; by: string }): Promise<CliAck> {
  return ackSchema.parse(await callDaemon(opts, 'POST', '/api/v1/acks', { matchers: input.filters, by: input.by, comment: input.comment }));
}

export async function listAcks(opts: DaemonClientOptions): Promise<CliAck[]> {
  return z.object({ acks: z.array(ackSchema) }).parse(await callDaemon(opts, 'GET', '/api/v1/acks')).acks;
}

/** A plain table; times in UTC, saying so. */
export function formatAckTable(acks: readonly CliAck[]): string {
  const utc = (iso: string | null): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');
  const rows = acks.map((a) => [a.id, a.state, utc(a.at), a.by, String(a.fingerprints.length), a.endedAt ? `${utc(a.endedAt)}${a.endedBy ? ` by ${a.endedBy}` : ' (resolved)'}` : '', a.comment]);
  return `${textTable(['ID', 'STATE', 'AT (UTC)', 'BY', 'ALERTS', 'ENDED (UTC)', 'COMMENT'], rows)}\n`;
}

function fail(err: unknown): void {
  process.stderr.write(`ack: ${errorMessage(err)}\n`);
  process.exitCode = err instanceof DaemonRequestError ? EXIT_FAILURE : EXIT_USAGE;
}

export function registerAck(program: Command): void {
  withConnection(program.command('ack').description('acknowledge the firing alerts that every --filter matcher selects (no repeats, no escalation; the resolution is still told)'))
    .option('--filter <matcher>', 'Alertmanager-style matcher: name="v", name!="v", name=~"re", name!~"re" (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--comment <text>', 'what you are doing about it (shown with the alerts and in their resolution)', '')
    .option('--by <name>', 'who acknowledges (default: the authenticated user, else $USER; a daemon with authentication records its user)')
    .option('--list', 'list the acknowledgements instead')
    .option('--undo <id>', 'take an acknowledgement back: its alerts are repeated and escalated again')
    .option('--json', 'print JSON instead of text')
    .action(async (o: ConnectionFlags & { filter: string[]; comment: string; by?: string; list?: boolean; undo?: string; json?: boolean }) => {
      try {
        const conn = connection(o);
        const by = o.by ?? daemonClient(conn).user ?? process.env.USER ?? 'transfer-watch';
        if (o.list) {
          const acks = await listAcks(conn);
          process.stdout.write(o.json ? `${JSON.stringify(acks, null, 2)}\n` : formatAckTable(acks));
        } else if (o.undo !== undefined) {
          await callDaemon(conn, 'DELETE', `/api/v1/acks/${encodeURIComponent(o.undo)}?by=${encodeURIComponent(by)}`);
          process.stdout.write(`taken back ${o.undo}\n`);
        } else {
          if (o.filter.length === 0) {
            process.stderr.write('ack: give at least one --filter matcher (e.g. --filter alertname="DailyStatementMissing"), or --list / --undo ID\n');
            process.exitCode = EXIT_USAGE;
            return;
          }
          const ack = await acknowledge(conn, { filters: o.filter, comment: o.comment, by });
          process.stdout.write(o.json ? `${JSON.stringify(ack, null, 2)}\n` : `${ack.id}: ${ack.fingerprints.length} alert${ack.fingerprints.length === 1 ? '' : 's'} acknowledged by ${ack.by}\n`);
        }
        process.exitCode = EXIT_OK;
      } catch (err) {
        fail(err);
      }
    });
}
