import { spawn, type ChildProcess } from 'node:child_process';
import { z } from 'zod';
import { buildTransfersUrl, serviceEndpoints } from '../src/source/transfers-query.js';
import { bundleChild, firstLineOf } from './child-bundle.js';
import type { BenchHistory, ThroughputResult } from './bench-pipeline.js';

const readySchema = z.object({ url: z.string(), start: z.number(), end: z.number() });

/** The dense history served pre-serialised by a separate process (page-server-child.ts). */
export interface PageServer {
  history: BenchHistory;
  close(): Promise<void>;
}

/** `answerDelayMs`: each page answered that much later (a slower service); 0 answers at once. */
export async function startPageServer(minutes: number, answerDelayMs = 0): Promise<PageServer> {
  const bundled = await bundleChild('bench/page-server-child.ts');
  // stdin a pipe: the child exits when it closes (this process gone: see exit-with-parent.ts).
  const child: ChildProcess = spawn(process.execPath, [bundled.file, String(minutes), String(answerDelayMs)], { cwd: bundled.root, stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await firstLineOf(child);
  const ready = readySchema.parse(JSON.parse(line));
  return {
    history: ready,
    async close() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      bundled.remove();
    },
  };
}

/**
 * The floor: a bare loop of `fetch` and `JSON.parse` over the same two queries the client and the pipelines send
 * (failures, successes, at once, 1,000 a page), following `next`; it counts records and checks nothing else.
 */
export async function measureRawFetch(h: BenchHistory): Promise<ThroughputResult> {
  const endpoints = serviceEndpoints(h.url);
  const tokenAnswer = await fetch(endpoints.token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: 'demo', password: 'demo' }),
  });
  const { access_token: token } = z.object({ access_token: z.string() }).parse(await tokenAnswer.json());
  return floorLoop(h, async (url) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    return JSON.parse(await res.text()) as { data: unknown[]; next: string };
  });
}

/**
 * The floor's loop, for whatever reads a page (`page`: the bare `fetch` + `JSON.parse`, or the client's HTTP layer):
 * the two queries the client and the pipelines send (failures, successes, at once, 1,000 a page), following `next`,
 * counting records and checking nothing else.
 */
export async function floorLoop(h: BenchHistory, page: (url: URL) => Promise<{ data: unknown[]; next: string }>): Promise<ThroughputResult> {
  const endpoints = serviceEndpoints(h.url);
  let requests = 0;
  const started = performance.now();
  const counts = await Promise.all(
    ([-1, 0] as const).map(async (results) => {
      let url: URL | undefined = buildTransfersUrl(endpoints, { start: h.start, end: h.end, results, limit: 1000 });
      let n = 0;
      while (url) {
        const { data, next } = await page(url);
        requests++;
        n += data.length;
        url = next ? new URL(next, url) : undefined;
      }
      return n;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const records = counts.reduce((a, b) => a + b, 0);
  return { records, seconds, recordsPerSecond: records / seconds, requests };
}
