import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../../src/simulator/start-simulator.js';
import { runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { writeEstateConfig } from '../helpers/estate-config.js';

/**
 * The daemon's picture of the flows (contract section 13) through the built binary: after its SLA backfill it
 * answers `/api/v1/flows` with the flows `discover` finds reading the service itself, proposes rules for the ones
 * nobody watches, shows them first on `/flows`, and counts them in `transfer_watch_flows`.
 */

const flowSchema = z.object({
  user: z.string(),
  event: z.string(),
  pattern: z.string(),
  schedule: z.object({ kind: z.string(), weekdays: z.array(z.number()), calendar: z.string().nullable(), times: z.array(z.string()) }),
  watched_by: z.array(z.string()),
});
const reportSchema = z.object({ flows: z.array(flowSchema) });
type Flow = z.infer<typeof flowSchema>;
const picture = (flows: Flow[]): string[] => flows.map((f) => JSON.stringify([f.user, f.event, f.pattern, f.schedule, f.watched_by])).sort();

let sim: RunningSimulator;
let daemon: DaemonProcess;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ estate: 20, ratePerMinute: 0.5, historyDays: 70, seed: 11 });
  dir = mkdtempSync(path.join(tmpdir(), 'tw-flows-'));
  writeEstateConfig(dir, sim.url, ['server: { listen: "127.0.0.1:0" }', `state: { dir: ${JSON.stringify(path.join(dir, 'state'))} }`, 'sla: { backfill: 60d }']);
  daemon = await startDaemonProcess(path.join(dir, 'config.yaml'));
  await daemon.waitForLog((l) => l.msg === 'SLA backfill: flow summary filled', 60_000);
}, 90_000);

afterAll(async () => {
  await daemon?.kill();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the daemon’s flows', () => {
  it('answers /api/v1/flows with what discover finds in the service, without reading it again', async () => {
    const fromDaemon = reportSchema.parse(await (await fetch(`${daemon.url}/api/v1/flows`)).json());
    const run = await runCli(['discover', '-c', path.join(dir, 'config.yaml'), '--format', 'json']);
    expect(run.code).toBe(0);
    const fromService = reportSchema.parse(JSON.parse(run.stdout));
    expect(fromDaemon.flows.length).toBeGreaterThanOrEqual(15);
    expect(picture(fromDaemon.flows)).toEqual(picture(fromService.flows));

    const unwatched = reportSchema.parse(await (await fetch(`${daemon.url}/api/v1/flows?watched=false`)).json());
    expect(unwatched.flows).toHaveLength(fromDaemon.flows.length - 1);
    expect(unwatched.flows.some((f) => f.watched_by.length > 0)).toBe(false);
    const bad = await fetch(`${daemon.url}/api/v1/flows?watched=maybe`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/watched: must be true or false/);
  }, 60_000);

  it('proposes rules for the flows nobody watches, shows them first on /flows, and counts them', async () => {
    const proposal = await fetch(`${daemon.url}/api/v1/flows/proposal`);
    expect(proposal.headers.get('content-type')).toMatch(/yaml/);
    const yaml = await proposal.text();
    expect(yaml).toMatch(/# Already watched:\n#\s+BANCO001 reception \/in\/BANCO001\/EXTRATO_\*\.RET: Banco001Statement/);
    expect(yaml).toMatch(/- name: Expected\w+\n\s+type: missing_file/);

    const page = await fetch(`${daemon.url}/flows`);
    expect(page.status).toBe(200);
    const body = await page.text();
    const unwatchedAt = body.indexOf('data-section="unwatched"');
    const watchedAt = body.indexOf('data-section="watched"');
    expect(unwatchedAt).toBeGreaterThan(0);
    expect(watchedAt).toBeGreaterThan(unwatchedAt);
    expect(body.slice(watchedAt)).toContain('Banco001Statement');
    expect(body.slice(unwatchedAt, watchedAt)).toContain('proposed rule');
    expect(await (await fetch(`${daemon.url}/`)).text()).toContain('href="/flows"');

    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).toMatch(/^transfer_watch_flows\{watched="true"\} 1$/m);
    expect(metrics).toMatch(/^transfer_watch_flows\{watched="false"\} (1[5-9]|2\d)$/m);
  }, 60_000);
});
