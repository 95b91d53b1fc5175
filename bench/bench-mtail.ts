import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TransferHistoryClient } from '../src/source/transfer-history-client.js';
import { silentLogger } from '../src/util/logger.js';
import { benchSource, type BenchHistory } from './bench-pipeline.js';

export interface MtailResult {
  version: string;
  lines: number;
  seconds: number;
  linesPerSecond: number;
}

/**
 * What transfer-watch's metrics do, as an mtail program: transfers and bytes by instance, event and result,
 * failures by instance and code, from one log line per transfer.
 */
const PROGRAM = `counter mft_transfers_total by mft_instance, event, result
counter mft_transfer_bytes_total by mft_instance, event, result
counter mft_transfer_errors_total by mft_instance, code

/^(?P<time>\\S+) (?P<instance>\\S+) (?P<user>\\S+) (?P<event>\\S+) (?P<code>\\d+) (?P<size>\\d+) (?P<file>.+)$/ {
  $code == 0 {
    mft_transfers_total[$instance][$event]["success"]++
    mft_transfer_bytes_total[$instance][$event]["success"] += $size
  } else {
    mft_transfers_total[$instance][$event]["error"]++
    mft_transfer_bytes_total[$instance][$event]["error"] += $size
    mft_transfer_errors_total[$instance][$code]++
  }
}
`;

/** The mtail binary on PATH, or undefined (Debian's package `mtail`). */
export function findMtail(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v mtail'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() || undefined : undefined;
}

/**
 * mtail on the same records: the slice is fetched from the simulator once (not timed) and written as one log
 * line per transfer; mtail then reads the file once (`--one_shot`) with PROGRAM, timed as a whole process
 * (start-up included, as small a share as our pipeline's HTTP client set-up). It reads a local file, where
 * transfer-watch pays for HTTP and JSON: the comparison favours mtail.
 */
export async function measureMtail(mtail: string, history: BenchHistory): Promise<MtailResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-bench-mtail-'));
  try {
    mkdirSync(path.join(dir, 'progs'));
    writeFileSync(path.join(dir, 'progs/transfers.mtail'), PROGRAM);
    const log = path.join(dir, 'transfers.log');
    const out = createWriteStream(log);
    let lines = 0;
    const client = new TransferHistoryClient({ source: benchSource(history.url), logger: silentLogger() });
    for (const results of [-1, 0] as const) {
      for await (const page of client.pages({ start: history.start, end: history.end, results, limit: 1000 })) {
        let chunk = '';
        for (const t of page.transfers) chunk += `${new Date(t.time).toISOString()} ${t.instance} ${t.user} ${t.event} ${t.code} ${t.size} ${t.file}\n`;
        lines += page.transfers.length;
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      }
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    const version = execFileSync(mtail, ['--version'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? '';
    const started = performance.now();
    const run = spawnSync(mtail, ['--progs', path.join(dir, 'progs'), '--logs', log, '--one_shot', '--one_shot_format=prometheus', '--logtostderr'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const seconds = (performance.now() - started) / 1000;
    if (run.status !== 0) throw new Error(`mtail exited with ${run.status}: ${run.stderr.slice(-500)}`);
    // Its counters must account for every line, or the rate would be of lines it skipped.
    let counted = 0;
    for (const m of run.stdout.matchAll(/^mft_transfers_total\{[^}]*\} (\d+)/gm)) counted += Number(m[1]);
    if (counted !== lines) throw new Error(`mtail counted ${counted} transfers of ${lines} lines`);
    return { version, lines, seconds, linesPerSecond: lines / seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
