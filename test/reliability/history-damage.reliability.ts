import { closeSync, existsSync, openSync, readFileSync, readdirSync, statSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually, runCli } from '../helpers/daemon-process.js';
import { Scenario } from '../e2e/helpers/e2e-daemon.js';
import { writeStatementLedger } from '../e2e/helpers/statement-ledger.js';
import { recordResult } from './harness.js';

/**
 * A SQLite history damaged while the daemon runs (issue 53, item 9), at the size a real ledger reaches: 192,000
 * occurrences (over 100 MB, 400 days × 480 partners) beside the ledger the daemon filled from the simulator. Two
 * kinds of damage: 128 KB overwritten in the middle of the database file, and frames of the WAL overwritten. Each
 * must be found while running (the periodic check), said (history_up 0, TransferWatchHistoryDamaged), repaired from
 * the newest good backup and the span since it judged again; the ledger after equals the ledger before.
 */

const DAY = 86_400_000;
const PARTNERS = 480;
const DAYS = 400;
const alertsSchema = z.object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()) })) });
const reportSchema = z.object({ rows: z.array(z.unknown()) });

type LedgerRow = Record<string, unknown>;

/** Every occurrence of the ledger, in a stable order, as the file holds it (read from a copy: the daemon may run). */
function ledger(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare('SELECT rule, key_text, local_date, deadline, outcome, final, arrived_at, lateness_seconds, count FROM sla_occurrences ORDER BY rule, key_text, local_date, deadline')
      .all()
      .map((r) => JSON.stringify(r));
  } finally {
    db.close();
  }
}

/**
 * Adds PARTNERS × DAYS judged occurrences of the rule, ending `endBack` days ago, cloned from one the daemon wrote:
 * the size of a year's ledger of a large estate. Their dates are before the backfill's span, so no re-judgement
 * touches them: after a repair they are there as they were, or lost.
 */
function plantLedger(file: string, today: number, endBack: number): number {
  const db = new Database(file);
  try {
    const model = db.prepare('SELECT * FROM sla_occurrences LIMIT 1').get() as LedgerRow | undefined;
    if (!model) throw new Error('no occurrence to clone');
    const columns = Object.keys(model);
    const insert = db.prepare(`INSERT INTO sla_occurrences (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
    // Each occurrence names its file as a real one does, with the name and source of a long partner path.
    const files = (user: string, date: string): string => JSON.stringify([{ file: `/in/${user}/STATEMENT_${user}_${date.replace(/-/g, '')}_FULL_POSITION_AND_MOVEMENTS.RET`, source: 'sim', instance: 'PROD01', at: 0 }]);
    let n = 0;
    db.transaction(() => {
      for (let p = 0; p < PARTNERS; p++) {
        const user = `P${String(p).padStart(4, '0')}`;
        for (let back = endBack + DAYS - 1; back >= endBack; back--) {
          const date = new Date(today - back * DAY).toISOString().slice(0, 10);
          const deadline = today - back * DAY + 8 * 3_600_000;
          const late = (p + back) % 17 === 0;
          const missing = (p + back) % 41 === 0;
          insert.run({
            ...model,
            id: `StatementMissing|user=${user}|${date}|${deadline}`,
            key_text: `user=${user}`,
            key: JSON.stringify({ user }),
            local_date: date,
            deadline,
            outcome: missing ? 'missing' : late ? 'late' : 'on_time',
            final: 1,
            arrived_at: missing ? null : deadline + (late ? 1_800_000 : -3_600_000),
            lateness_seconds: missing ? null : late ? 1800 : 0,
            count: missing ? 0 : 1,
            files: missing ? '[]' : files(user, date),
            closes_at: deadline,
            // A second copy sent after the close, as banks do: named in the evidence.
            after_close: missing ? '[]' : files(user, date),
          });
          n++;
        }
      }
    })();
    return n;
  } finally {
    db.close();
  }
}

/** The wal-index's frames: those the database holds (mxFrame) and those already copied into the file (nBackfill). */
function framesHeld(shmFile: string): { held: number; backfilled: number } {
  if (!existsSync(shmFile)) return { held: 0, backfilled: 0 };
  const shm = readFileSync(shmFile);
  if (shm.length < 100 || shm[12] !== 1) return { held: 0, backfilled: 0 };
  const read = (at: number): number => (endianness() === 'LE' ? shm.readUInt32LE(at) : shm.readUInt32BE(at));
  return { held: read(16), backfilled: read(96) };
}

/** Overwrites `bytes` of `file` from `at` with a pattern no page or frame holds. */
function overwrite(file: string, at: number, bytes: number): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(bytes, 0xa5), 0, bytes, at);
  } finally {
    closeSync(fd);
  }
}

interface Damage {
  name: string;
  /** Damages the running daemon's files; returns what was done, for the results table (undefined: not now). */
  apply(stateDir: string): string | undefined;
}

const DAMAGES: Damage[] = [
  {
    name: 'pages in the middle of the file',
    apply: (stateDir) => {
      const file = join(stateDir, 'history.sqlite');
      const size = statSync(file).size;
      const at = Math.floor(size / 2 / 4096) * 4096;
      overwrite(file, at, 128 * 1024);
      return `128 KB overwritten at ${at} of ${size} bytes`;
    },
  },
  {
    name: 'frames of the WAL',
    apply: (stateDir) => {
      const wal = join(stateDir, 'history.sqlite-wal');
      const { held, backfilled } = framesHeld(join(stateDir, 'history.sqlite-shm'));
      // Frames a checkpoint already copied into the file are history: overwriting them loses nothing (and is rightly
      // not called damage). Asked again until the log holds frames the file does not.
      if (held <= backfilled || !existsSync(wal)) return undefined;
      const pageSize = readFileSync(wal).readUInt32BE(8);
      const bytes = held * (24 + pageSize);
      // Past the WAL's 32-byte header: the frames the database holds (each a 24-byte header and a page).
      overwrite(wal, 32, bytes);
      return `${held} frames of the WAL the database holds (${held - backfilled} not yet in the file; ${bytes} bytes) overwritten`;
    },
  },
];

describe('reliability: a large SQLite history damaged while the daemon runs', () => {
  for (const damage of DAMAGES) {
    it(`${damage.name}: found while running, loud, restored from the newest good backup, the ledger as it was`, async () => {
      const s = await Scenario.create('rel-history-damage');
      try {
        const { today, day } = writeStatementLedger(s, { bank1Skips: (back) => back % 3 === 0, extra: { history: { check_interval: '3s', backup: { interval: '1h', keep: 2 } } } });
        const first = await s.start();
        await first.waitForLog((l) => l['msg'] === 'SLA backfill done', 60_000);
        await first.kill('SIGTERM');
        const file = join(s.stateDir, 'history.sqlite');
        const planted = plantLedger(file, today, 30);
        const backedUp = await runCli(['history', 'backup', '--config', s.configFile]);
        expect(backedUp.code, backedUp.stderr).toBe(0);
        const before = ledger(file);
        expect(before.length).toBeGreaterThanOrEqual(planted + 16);
        const bytes = statSync(file).size;
        expect(bytes).toBeGreaterThan(100 * 1024 * 1024);

        const second = await s.start();
        await eventually(async () => (await fetch(`${s.url}/readyz`)).ok, 30_000);
        // Something written since the start (the WAL holds frames, the file is open and read).
        const report = await fetch(`${s.url}/api/v1/sla/report?from=${day(DAYS + 40)}&to=${day(2)}`);
        expect(report.status).toBe(200);
        expect(reportSchema.parse(await report.json()).rows.length).toBeGreaterThan(0);
        await eventually(() => {
          const wal = join(s.stateDir, 'history.sqlite-wal');
          return damage.name.includes('WAL') ? existsSync(wal) && statSync(wal).size > 32 : true;
        }, 30_000);
        // The service answers slowly from here: the repair judges the span since the backup from it, long enough to
        // see what is said meanwhile.
        s.sim.setFaults({ delayMs: 1_500 });
        const done = await eventually(() => damage.apply(s.stateDir), 30_000, 50);
        const damagedAt = Date.now();

        const found = await second.waitForLog((l) => String(l['msg']).startsWith('the history database is damaged'), 60_000);
        const foundAfter = Date.now() - damagedAt;
        await eventually(async () => (await s.metric('transfer_watch_history_up')) === 0, 20_000, 100);
        await eventually(async () => alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts.some((a) => a.labels['alertname'] === 'TransferWatchHistoryDamaged'), 30_000, 200);
        // Never an empty ledger as if true: the reads answer 503 with the reason while it is repaired.
        const meanwhile = await fetch(`${s.url}/api/v1/sla/report?from=${day(DAYS + 40)}&to=${day(2)}`);
        const repairedEarly = second.logs.some((l) => String(l['msg']).startsWith('the history database is repaired'));
        if (!repairedEarly) expect(meanwhile.status).toBe(503);
        else await meanwhile.body?.cancel();
        s.sim.setFaults({ delayMs: 0 });
        const repaired = await second.waitForLog((l) => String(l['msg']).startsWith('the history database is repaired'), 240_000);
        await eventually(async () => (await s.metric('transfer_watch_history_up')) === 1, 30_000);
        await eventually(async () => !alertsSchema.parse(await (await fetch(`${s.url}/api/v1/alerts`)).json()).alerts.some((a) => a.labels['alertname'] === 'TransferWatchHistoryDamaged'), 30_000, 200);
        await second.kill('SIGTERM');

        // The ledger after: read from the restored file, as the next process reads it.
        const after = ledger(file);
        const afterSet = new Set(after);
        const beforeSet = new Set(before);
        const lost = before.filter((r) => !afterSet.has(r));
        const added = after.filter((r) => !beforeSet.has(r));
        expect(readdirSync(s.stateDir).some((f) => f.startsWith('history.sqlite.corrupt-'))).toBe(true);
        recordResult({
          scenario: `large SQLite history, ${damage.name}, while running`,
          faults: `${done}; ${planted.toLocaleString('en')} planted occurrences (${Math.round(bytes / 1e6)} MB); found after ${(foundAfter / 1000).toFixed(1)} s; ${String(repaired['ledger_judged'] ?? '?')} occurrences judged again`,
          expected: before.length,
          delivered: after.length - added.length,
          duplicated: 0,
          lost: lost.length,
          falseAlerts: added.length,
          ...(lost.length || added.length ? { note: `lost ${lost.slice(0, 2).join(' ')}; added ${added.slice(0, 2).join(' ')}` } : {}),
        });
        expect(found['moved_to']).toEqual(expect.any(String));
        expect({ lost: lost.length, added: added.length }).toEqual({ lost: 0, added: 0 });
      } finally {
        await s.cleanup();
      }
    }, 420_000);
  }
});
