/**
 * `npm run docs:sla-page`: the pictures of the `/sla` page in docs/sla.md are a real ledger's. The built CLI serves
 * the simulator's partner estate (two months of scheduled files), `discover` proposes the rules from that history,
 * the daemon runs them with `sla.backfill` so the ledger is filled from the same history, and Debian's Chromium
 * (playwright-core) takes the month grid at 1280 px (docs/images/sla-page.png) and the printed statement of the
 * partner with the most late or missing deadlines (docs/images/sla-statement.png). Everything it starts is stopped
 * by pid and its temporary folder removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { stringify } from 'yaml';
import { z } from 'zod';
import { ESTATE_CALENDAR, ESTATE_CALENDAR_NAME, ESTATE_TIMEZONE } from '../src/simulator/estate.js';
import { freePort } from './free-port.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(root, 'dist/cli/main.js');
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const HISTORY_DAYS = 62;
const GRID = path.join(root, 'docs/images/sla-page.png');
const STATEMENT = path.join(root, 'docs/images/sla-statement.png');


const started: ChildProcess[] = [];
function start(args: string[]): ChildProcess {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  started.push(child);
  return child;
}

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`transfer-watch ${args[0] ?? ''} exited ${String(code)}`))));
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const reportSchema = z.object({ rows: z.array(z.object({ key: z.record(z.string(), z.string()), on_time: z.number(), late: z.number(), missing: z.number() })) });

const dir = mkdtempSync(path.join(tmpdir(), 'tw-docs-sla-'));
try {
  const simPort = await freePort();
  const port = await freePort();
  start(['simulate', '--port', String(simPort), '--estate', '16', '--rate', '1', '--history-days', String(HISTORY_DAYS), '--seed', '11']);
  const simUrl = `http://127.0.0.1:${simPort}`;
  await until('the simulator', async () => ((await fetch(`${simUrl}/oauth/token`, { method: 'POST' })).status > 0 ? true : undefined), 30_000);
  const rules = path.join(dir, 'rules.yaml');
  writeFileSync(rules, 'rules: []\n');
  const config = path.join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      sources: [{ name: 'mft', base_url: simUrl, username: 'demo', password: 'demo' }],
      poll: { interval: '10s', success_interval: '10s', initial_lookback: '1h' },
      state: { dir: path.join(dir, 'state') },
      rule_files: [rules],
      receivers: [{ name: 'null', console: {} }],
      route: { receiver: 'null', group_by: ['alertname'] },
      server: { listen: `127.0.0.1:${port}` },
      display_timezone: ESTATE_TIMEZONE,
      calendars: { [ESTATE_CALENDAR_NAME]: ESTATE_CALENDAR },
      sla: { backfill: `${HISTORY_DAYS - 1}d` },
    }),
  );
  // The rules are the ones discover proposes from the history: what a new user would run.
  await run(['discover', '-c', config, '--since', `${HISTORY_DAYS - 1}d`, '--out', rules]);
  start(['run', '-c', config]);
  const url = `http://127.0.0.1:${port}`;
  const today = new Date().toISOString().slice(0, 10);
  const month = today.slice(0, 7);
  // The backfill is done when the month's figures stop moving.
  let last = -1;
  const rows = await until(
    'the backfill',
    async () => {
      const report = reportSchema.parse(await (await fetch(`${url}/api/v1/sla/report?from=${month}-01&to=${today}`)).json());
      const judged = report.rows.reduce((n, r) => n + r.on_time + r.late + r.missing, 0);
      const settled = judged > 0 && judged === last;
      last = judged;
      return settled ? report.rows : undefined;
    },
    10 * 60_000,
  );
  const worst = [...rows].sort((a, b) => b.late + b.missing - (a.late + a.missing))[0];
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/sla`);
    await page.screenshot({ path: GRID, fullPage: true });
    console.log(`wrote ${path.relative(root, GRID)}`);
    const key = Object.entries(worst?.key ?? {})
      .map(([label, value]) => `&key=${encodeURIComponent(`${label}=${value}`)}`)
      .join('');
    await page.goto(`${url}/sla?month=${month}${key}`);
    // As printed: what a partner or an auditor receives.
    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: STATEMENT, fullPage: true });
    console.log(`wrote ${path.relative(root, STATEMENT)}`);
  } finally {
    await browser.close();
  }
} finally {
  for (const child of started) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
