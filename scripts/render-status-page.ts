/**
 * `npm run docs:status-page`: the README's picture of the status page is the demo's own page, three minutes after
 * `transfer-watch demo` starts (what a new user sees): the built CLI runs the demo on a free port, Debian's
 * Chromium (playwright-core) loads its page at 3 minutes, and the screenshot goes to docs/images/status-page.png.
 * The demo's temporary state folder goes with it.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { freePort } from './free-port.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const WAIT_MS = Number(process.env['STATUS_PAGE_AT_MS'] ?? 3 * 60_000);
const OUT = path.join(root, 'docs/images/status-page.png');


const port = await freePort();
const demo = spawn(process.execPath, [path.join(root, 'dist/cli/main.js'), 'demo', '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
demo.stdout.on('data', (d: Buffer) => process.stdout.write(d));
try {
  await new Promise((r) => setTimeout(r, WAIT_MS));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.screenshot({ path: OUT, fullPage: true });
  await browser.close();
  console.log(`wrote ${path.relative(root, OUT)}`);
} finally {
  // SIGTERM: the demo stops as the daemon does and removes the state folder it made.
  demo.kill('SIGTERM');
  await new Promise((r) => demo.once('exit', r));
}
