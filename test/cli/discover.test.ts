import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSimulator, type RunningSimulator, type SimulatorTruth } from '../../src/simulator/start-simulator.js';
import { runCli } from '../helpers/daemon-process.js';
import { writeEstateConfig } from '../helpers/estate-config.js';

/**
 * `discover` through the built binary against the simulator's estate, flow by flow against the estate's truth:
 * every recurring flow found with its pattern, days and calendar, deadlines between the flow's p95 and p99 + 30 min,
 * nothing proposed for ad-hoc files or month-end files over two months, the configured rule named as the watcher
 * of its flow, and the proposed rule file accepted by `check`.
 */

const flowSchema = z.object({
  user: z.string(),
  event: z.string(),
  pattern: z.string(),
  example: z.string(),
  schedule: z.object({ kind: z.string(), weekdays: z.array(z.number()), calendar: z.string().nullable(), times: z.array(z.string()) }),
  occurrences: z.number(),
  watched_by: z.array(z.string()),
  rule: z.object({ name: z.string(), deadline: z.string() }),
});
const reportSchema = z.object({ transfers_read: z.number(), flows: z.array(flowSchema), not_recurring: z.object({ flows: z.number(), transfers: z.number() }) });

const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

let sim: RunningSimulator;
let dir: string;
let truth: SimulatorTruth;

beforeAll(async () => {
  sim = await startSimulator({ estate: 20, ratePerMinute: 0.5, historyDays: 70, seed: 7 });
  truth = sim.truth();
  dir = mkdtempSync(path.join(tmpdir(), 'tw-discover-'));
  writeEstateConfig(dir, sim.url);
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('transfer-watch discover', () => {
  it('finds every recurring flow of the estate with its days, calendar and a deadline in range, and proposes nothing for the noise', async () => {
    const run = await runCli(['discover', '-c', path.join(dir, 'config.yaml'), '--format', 'json', '--since', '60d']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = reportSchema.parse(JSON.parse(run.stdout));
    expect(report.transfers_read).toBeGreaterThan(1000);

    const recurring = truth.flows.filter((t) => t.recurring);
    const noise = truth.flows.filter((t) => !t.recurring);
    expect(recurring.length).toBeGreaterThanOrEqual(15);
    expect(noise.length).toBeGreaterThanOrEqual(2);
    let deadlines = 0;
    let inRange = 0;
    for (const t of recurring) {
      const found = report.flows.find((f) => f.user === t.user && f.event === t.event && f.pattern.replace(/\?+/g, '*') === t.pattern);
      expect(found, `${t.user} ${t.pattern}`).toBeDefined();
      if (!found) continue;
      expect(found.schedule.weekdays, `${t.user} ${t.pattern}`).toEqual(t.weekdays);
      expect(found.schedule.calendar, `${t.user} ${t.pattern}`).toBe(t.calendar);
      expect(found.schedule.times).toHaveLength(t.arrivals.length);
      t.arrivals.forEach((a, i) => {
        deadlines++;
        const d = minutes(found.schedule.times[i] ?? '');
        if (d >= minutes(a.p95) && d <= minutes(a.p99) + 30) inRange++;
      });
    }
    expect(inRange / deadlines).toBeGreaterThanOrEqual(0.9);
    for (const t of noise) expect(report.flows.filter((f) => f.user === t.user && f.pattern.replace(/\?+/g, '*') === t.pattern), t.pattern).toEqual([]);
    // Precision: nothing found that the truth does not hold.
    expect(report.flows).toHaveLength(recurring.length);
    expect(report.not_recurring.transfers).toBeGreaterThan(0);

    const watched = report.flows.filter((f) => f.watched_by.length > 0);
    expect(watched.map((f) => [f.user, f.pattern, f.watched_by])).toEqual([['BANCO001', '/in/BANCO001/EXTRATO_*.RET', ['Banco001Statement']]]);
  }, 60_000);

  it('writes a rule file that check accepts, without the flow already watched', async () => {
    const out = path.join(dir, 'proposed.yaml');
    const run = await runCli(['discover', '-c', path.join(dir, 'config.yaml'), '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/recurring flows, written to/);
    const config = path.join(dir, 'config-proposed.yaml');
    writeFileSync(config, readFileSync(path.join(dir, 'config.yaml'), 'utf8').replace('rule_files: [watched.yaml]', 'rule_files: [watched.yaml, proposed.yaml]'));
    const check = await runCli(['check', '-c', config]);
    // Nothing but the warning that the test's own calendar of BR has no region (it leaves the states' holidays out).
    expect(check.stderr.split('\n').filter((l) => l !== '' && !l.includes(': warning: calendar "BR": holidays of BR without a region leave out'))).toEqual([]);
    expect(check.code).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/# Already watched:\n#\s+BANCO001 reception \/in\/BANCO001\/EXTRATO_\*\.RET: Banco001Statement/);
    expect(text).not.toMatch(/file: \[ \/in\/BANCO001\/EXTRATO_\*\.RET \]/);
    // Each rule is under its evidence.
    expect(text).toMatch(/# \d+ occurrences, \d+ missed, \d+ late after the proposed deadline[^\n]*\n[^\n]*\n\s+- name: Expected/);
  }, 60_000);

  it('says what is wrong with its options and exits 2', async () => {
    const run = await runCli(['discover', '-c', path.join(dir, 'config.yaml'), '--since', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--since/);
  });
});

describe('transfer-watch discover on a dense service', () => {
  it('reads in the windows of poll.max_window: a span far over the per-window cap is read whole, not abandoned', async () => {
    // About 14,000 successful transfers in the day read, and a cap of 1,000 records per window (the least there is):
    // one query over the span, as discover made before, stopped at too_many_pages.
    const dense = await startSimulator({ seed: 11, ratePerMinute: 12, historyDays: 1 });
    const denseDir = mkdtempSync(path.join(tmpdir(), 'tw-discover-dense-'));
    try {
      writeFileSync(
        path.join(denseDir, 'config.yaml'),
        ['sources:', '  - name: mft', `    base_url: ${dense.url}`, '    username: demo', '    password: demo', '    max_records_per_window: 1000', 'poll: { max_window: 1h }', ''].join('\n'),
      );
      const run = await runCli(['discover', '-c', path.join(denseDir, 'config.yaml'), '--since', '1d', '--min-occurrences', '2', '--format', 'json']);
      expect(run.stderr).not.toContain('too_many_pages');
      expect(run.code, run.stderr).toBe(0);
      const report = reportSchema.parse(JSON.parse(run.stdout));
      expect(report.transfers_read).toBeGreaterThan(5_000);
      // A config with neither a zone nor a calendar: the proposal says what it lacks.
      expect(run.stderr).toContain('discover: note: the deadlines are proposed in UTC');
      expect(run.stderr).toContain('discover: note: no business calendar is configured');
    } finally {
      await dense.close();
      rmSync(denseDir, { recursive: true, force: true });
    }
  }, 120_000);
});
