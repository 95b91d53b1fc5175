import type { Command } from 'commander';
import { z } from 'zod';
import { parseDuration } from '../base/duration.js';
import { textTable } from '../base/text-table.js';
import { ONCALL_GROUPINGS, spanText } from '../history/oncall-report.js';
import { TransferWatchError, errorMessage } from '../util/errors.js';
import { callDaemon, connection, DaemonRequestError, withConnection, type ConnectionFlags, type DaemonClientOptions } from './daemon-http-client.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** `transfer-watch history oncall` (contract 14): how fast the team acknowledges and resolves, from /api/v1/history/oncall. */

const percentiles = z.object({ p50: z.number().nullable(), p95: z.number().nullable() });
const reportSchema = z.object({
  from: z.string(),
  to: z.string(),
  by: z.string(),
  truncated: z.boolean(),
  rows: z.array(z.object({ group: z.string(), alerts: z.number(), acknowledged: z.number(), escalated: z.number(), mtta_seconds: percentiles, mttr_seconds: percentiles })),
});
export type OncallReport = z.infer<typeof reportSchema>;

export async function fetchOncall(client: DaemonClientOptions, q: { from: number; to: number; by: string }): Promise<OncallReport> {
  const params = new URLSearchParams({ from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), by: q.by });
  return reportSchema.parse(await callDaemon(client, 'GET', `/api/v1/history/oncall?${params.toString()}`));
}

export function formatOncall(report: OncallReport): string {
  const rows = report.rows.map((r) => [r.group || '(none)', String(r.alerts), String(r.acknowledged), String(r.escalated), spanText(r.mtta_seconds.p50), spanText(r.mtta_seconds.p95), spanText(r.mttr_seconds.p50), spanText(r.mttr_seconds.p95)]);
  const head = `on-call from ${report.from} to ${report.to}, by ${report.by}${report.truncated ? ' (the span holds more events than one report reads: narrow it)' : ''}\n`;
  return `${head}${textTable([report.by.toUpperCase(), 'ALERTS', 'ACKED', 'ESCALATED', 'MTTA P50', 'MTTA P95', 'MTTR P50', 'MTTR P95'], rows)}\n`;
}

export function registerHistoryOncall(history: Command): void {
  withConnection(history.command('oncall').description('how fast alerts were acknowledged and resolved (MTTA, MTTR: p50 and p95), by alert name, receiver or partner'))
    .option('--since <duration>', 'from this long ago (7d, 30d)', '30d')
    .option('--by <grouping>', `group by ${ONCALL_GROUPINGS.join(', ')}`, 'alertname')
    .option('--format <format>', 'table or json', 'table')
    .action(async (o: ConnectionFlags & { since: string; by: string; format: string }) => {
      let q: { from: number; to: number; by: string };
      try {
        if (!(ONCALL_GROUPINGS as readonly string[]).includes(o.by)) throw new TransferWatchError('invalid_grouping', `--by must be one of ${ONCALL_GROUPINGS.join(', ')}`);
        if (o.format !== 'table' && o.format !== 'json') throw new TransferWatchError('invalid_format', '--format must be table or json');
        const now = Date.now();
        q = { from: now - parseDuration(o.since), to: now, by: o.by };
      } catch (err) {
        process.stderr.write(`history oncall: ${errorMessage(err)}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      try {
        const report = await fetchOncall(connection(o), q);
        process.stdout.write(o.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatOncall(report));
        process.exitCode = EXIT_OK;
      } catch (err) {
        process.stderr.write(`history oncall: ${errorMessage(err)}\n`);
        process.exitCode = err instanceof DaemonRequestError ? EXIT_FAILURE : EXIT_USAGE;
      }
    });
}
