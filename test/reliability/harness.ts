import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { startCaptureServer, type CapturedRequest } from '../helpers/capture-server.js';
import { startDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import type { ServiceRecord } from '../../src/source/transfer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** JSON-lines file each scenario appends its row to; the global teardown prints them as a table. */
    reliabilityResultsFile: string;
  }
}

/** One row of the table the suite prints. */
export interface ScenarioResult {
  scenario: string;
  faults: string;
  expected: number;
  delivered: number;
  duplicated: number;
  lost: number;
  /** Notifications of alerts nobody expected (a false alert). */
  falseAlerts: number;
  note?: string;
}

/**
 * Compare what receivers got with what was expected. Keys are `status:alert` strings, one per notification
 * received; each expected key must be seen exactly once, and nothing else may be seen.
 */
export function tally(expected: string[], received: string[]): Omit<ScenarioResult, 'scenario' | 'faults'> & { details: string } {
  const counts = new Map<string, number>();
  for (const key of received) counts.set(key, (counts.get(key) ?? 0) + 1);
  const expectedSet = new Set(expected);
  let delivered = 0;
  let duplicated = 0;
  let lost = 0;
  let falseAlerts = 0;
  const problems: string[] = [];
  for (const key of expectedSet) {
    const n = counts.get(key) ?? 0;
    if (n === 0) {
      lost++;
      problems.push(`lost ${key}`);
    } else {
      delivered++;
      if (n > 1) {
        duplicated += n - 1;
        problems.push(`${key} x${n}`);
      }
    }
  }
  for (const [key, n] of counts) {
    if (!expectedSet.has(key)) {
      falseAlerts += n;
      problems.push(`unexpected ${key} x${n}`);
    }
  }
  return { expected: expectedSet.size, delivered, duplicated, lost, falseAlerts, details: problems.join('; ') };
}

export function recordResult(row: ScenarioResult): void {
  const file = inject('reliabilityResultsFile');
  appendFileSync(file, `${JSON.stringify(row)}\n`);
}

export function formatTable(rows: ScenarioResult[]): string {
  const header = ['scenario', 'faults injected', 'expected', 'delivered', 'duplicated', 'lost', 'false', 'verdict'];
  const lines = rows.map((r) => [
    r.scenario,
    r.faults,
    String(r.expected),
    String(r.delivered),
    String(r.duplicated),
    String(r.lost),
    String(r.falseAlerts),
    r.duplicated === 0 && r.lost === 0 && r.falseAlerts === 0 && r.delivered === r.expected ? 'ok' : `FAIL${r.note ? ` (${r.note})` : ''}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

/** A temporary folder removed by `cleanup` (call it in afterEach/afterAll). */
export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `tw-rel-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeYaml(file: string, value: unknown): string {
  writeFileSync(file, stringifyYaml(value));
  return file;
}

const webhookPayloadSchema = z.object({
  version: z.literal('4'),
  status: z.enum(['firing', 'resolved']),
  commonLabels: z.record(z.string(), z.string()),
  alerts: z.array(z.object({ status: z.enum(['firing', 'resolved']), labels: z.record(z.string(), z.string()) })),
});

/**
 * The identity of an alert in the tables: its alertname and the label that tells the groups of a scenario
 * apart (user for error bursts, source for SourceDown, file rules by alertname alone).
 */
export function alertKey(labels: Record<string, string>): string {
  const name = labels['alertname'] ?? '?';
  const user = labels['user'];
  return user ? `${name}{user=${user}}` : name;
}

/** One `status:alert` key per alert of each webhook notification received (one alert per group in this suite). */
export function webhookKeys(requests: CapturedRequest[]): string[] {
  const keys: string[] = [];
  for (const r of requests) {
    const payload = webhookPayloadSchema.parse(JSON.parse(r.body));
    for (const a of payload.alerts) keys.push(`${a.status}:${alertKey(a.labels)}`);
  }
  return keys;
}

export interface Webhook {
  url: string;
  requests: CapturedRequest[];
  keys(): string[];
  close(): Promise<void>;
}

export async function startWebhook(respond?: Parameters<typeof startCaptureServer>[0]): Promise<Webhook> {
  const server = await startCaptureServer(respond);
  return { ...server, keys: () => webhookKeys(server.requests) };
}

/** Sum of every sample of a metric (optionally only samples whose label text contains `filter`). */
export async function metricSum(daemonUrl: string, name: string, filter = ''): Promise<number> {
  const text = await (await fetch(`${daemonUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (filter && !line.includes(filter)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** Kill the daemon (if any) and wait for it; safe to call twice. */
export async function stopDaemon(daemon: DaemonProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!daemon) return;
  await daemon.kill(signal);
}

export { startDaemonProcess, type DaemonProcess };

/** Mulberry32: a small seeded PRNG so random kill moments can be printed and replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `n` failed receptions of `user` within the last 1.5 s: a burst an error_burst rule with that threshold fires on. */
export function errorBurst(user: string, n: number): Partial<ServiceRecord>[] {
  return Array.from({ length: n }, (_, k) => ({
    DATAHORA: new Date(Date.now() - 1_500 + k * 100).toISOString(),
    USUARIO: user,
    RESULTADO: 21,
    EVENTO: 7,
    NOMEARQUIVO: `/in/${user}/RET_${k}.RET`,
  }));
}
