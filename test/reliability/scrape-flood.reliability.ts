import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { sleep, startDaemonProcess, stopDaemon, tempDir, writeYaml, type DaemonProcess } from './harness.js';

/**
 * A scrape flood (issue 14): thousands of concurrent `GET /metrics` against the daemon while it polls every
 * second. HTTP work must not stall the poll loop: connections are bounded and concurrent scrapes share one
 * rendering. Measured from the service's side: the gap between the daemon's report requests during the flood.
 */

const CONNECTIONS = 2_000;
const FLOOD_MS = 10_000;

/** The flood's thread: `connections` keep-alive clients scraping in a loop until told to stop, then the counts. */
const FLOOD_WORKER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true, maxSockets: workerData.connections });
let stop = false;
let answered = 0;
let refused = 0;
parentPort.once('message', () => { stop = true; });
const scrape = () => new Promise((resolve) => {
  const req = http.get(workerData.url, { agent }, (res) => {
    res.resume();
    res.on('end', () => { answered++; resolve(); });
    res.on('error', () => resolve());
  });
  req.on('error', () => { refused++; setTimeout(resolve, 20); });
});
const workers = Array.from({ length: workerData.connections }, async () => { while (!stop) await scrape(); });
Promise.all(workers).then(() => { agent.destroy(); parentPort.postMessage({ answered, refused }); });
`;

describe('reliability: a flood of scrapes', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it(`keeps polling every second under ${CONNECTIONS} concurrent GET /metrics`, async () => {
    const tmp = tempDir('tw-rel-flood-');
    cleanups.push(() => tmp.cleanup());
    const sim = await startSimulator({ seed: 5, scenario: 'steady', ratePerMinute: 600 });
    cleanups.push(() => sim.close());
    const config = writeYaml(join(tmp.dir, 'config.yaml'), {
      sources: [{ name: 'sim', base_url: sim.url, username: 'demo', password: 'demo', timeout: '5s' }],
      poll: { interval: '1s', success_interval: '1s', delay: '1s', initial_lookback: '2m' },
      state: { dir: join(tmp.dir, 'state') },
      server: { listen: '127.0.0.1:0' },
      log: { level: 'info' },
    });
    const daemon: DaemonProcess = await startDaemonProcess(config);
    cleanups.push(() => stopDaemon(daemon));
    await sleep(3_000);

    // The flood runs on its own thread: on the test's own event loop its 2,000 clients slowed the simulator's
    // answers (the simulator is what counts the polls), which is the test's load, not the daemon's.
    const flood = new Worker(FLOOD_WORKER, { eval: true, workerData: { url: `${daemon.url}/metrics`, connections: CONNECTIONS } });
    cleanups.push(async () => {
      await flood.terminate();
    });
    const floodDone = new Promise<{ answered: number; refused: number }>((resolve, reject) => {
      flood.once('message', resolve);
      flood.once('error', reject);
    });

    // The service counts the daemon's report requests: sample it and keep the longest gap between two.
    const started = Date.now();
    let last = sim.stats().reportRequests;
    let lastChange = Date.now();
    let longestGap = 0;
    while (Date.now() - started < FLOOD_MS) {
      await sleep(100);
      const now = sim.stats().reportRequests;
      if (now !== last) {
        longestGap = Math.max(longestGap, Date.now() - lastChange);
        last = now;
        lastChange = Date.now();
      }
    }
    longestGap = Math.max(longestGap, Date.now() - lastChange);
    flood.postMessage('stop');
    const { answered, refused } = await floodDone;
    console.log(`scrape flood: ${answered} scrapes answered, ${refused} connections refused or reset, longest gap between polls ${longestGap} ms`);
    expect(answered).toBeGreaterThan(CONNECTIONS);
    // Two streams polled every second: a gap over 5 s would mean the flood starved the poll loop.
    expect(longestGap).toBeLessThan(5_000);
  }, 60_000);
});
