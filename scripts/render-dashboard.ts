/**
 * `npx tsx scripts/render-dashboard.ts [--minutes N] [--out docs/images/dashboard.png]`: a picture of the Grafana
 * dashboard from real data. It runs the built daemon against the simulator's demo scenario, scrapes it with
 * Debian's Prometheus, asks Prometheus every panel's own queries (from grafana/transfer-watch.json, variables
 * set to "All"), draws them with uPlot in Debian's Chromium and takes a screenshot. Nothing is made up: an empty
 * panel is drawn empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { stringify } from 'yaml';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { freePort } from './free-port.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const minutes = Number(args[args.indexOf('--minutes') + 1] ?? 4) || 4;
const out = path.resolve(args.includes('--out') ? (args[args.indexOf('--out') + 1] ?? '') : path.join(root, 'docs/images/dashboard.png'));

interface Panel {
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ expr: string; legendFormat?: string }>;
}

/** The dashboard's variables as Grafana sets them with "All" selected. */
function expand(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', `${minutes}m`).replace(/\$\{?[a-z_]+\}?/g, '.*');
}


function waitForUrl(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    proc.stdout?.on('data', (d: Buffer) => {
      buffer += d.toString();
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(buffer);
      if (m?.[1]) resolve(m[1]);
    });
    proc.once('exit', () => reject(new Error('daemon exited during start')));
  });
}

async function query(prom: string, expr: string, range: { start: number; end: number } | undefined): Promise<Array<{ metric: Record<string, string>; values: Array<[number, string]> }>> {
  const params = new URLSearchParams({ query: expand(expr) });
  if (range) {
    params.set('start', String(range.start));
    params.set('end', String(range.end));
    params.set('step', '5');
  }
  const res = await fetch(`${prom}/api/v1/${range ? 'query_range' : 'query'}?${params.toString()}`);
  const body = (await res.json()) as { data?: { result?: Array<{ metric: Record<string, string>; values?: Array<[number, string]>; value?: [number, string] }> } };
  return (body.data?.result ?? []).map((r) => ({ metric: r.metric, values: r.values ?? (r.value ? [r.value] : []) }));
}

function legend(metric: Record<string, string>, format: string | undefined): string {
  if (format && !format.startsWith('__auto')) return format.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, k: string) => metric[k] ?? '');
  const text = Object.entries(metric).map(([k, v]) => `${k}=${v}`).join(', ');
  return text || 'value';
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tw-dashboard-'));
  const procs: ChildProcess[] = [];
  const sim = await startSimulator({ scenario: 'demo', seed: 1, ratePerMinute: 120 });
  try {
    const config = path.join(dir, 'config.yaml');
    writeFileSync(
      config,
      stringify({
        sources: [{ name: 'demo', base_url: sim.url, username: 'demo', password: 'demo' }],
        poll: { interval: '5s', success_interval: '5s', delay: '1s', initial_lookback: '30m' },
        state: { dir: path.join(dir, 'state') },
        rule_files: [path.join(root, 'rules/*.yaml')],
        receivers: [{ name: 'stdout', console: {} }],
        route: { receiver: 'stdout', group_by: ['alertname', 'user'], group_wait: '5s', group_interval: '30s' },
        server: { listen: '127.0.0.1:0' },
        log: { level: 'info' },
      }),
    );
    const daemon = spawn(process.execPath, [path.join(root, 'dist/cli/main.js'), 'run', '--config', config], { stdio: ['ignore', 'pipe', 'inherit'] });
    procs.push(daemon);
    const target = new URL(await waitForUrl(daemon)).host;
    daemon.stdout?.resume();
    const port = await freePort();
    const prom = `http://127.0.0.1:${port}`;
    writeFileSync(path.join(dir, 'prometheus.yml'), stringify({ global: { scrape_interval: '5s' }, scrape_configs: [{ job_name: 'transfer-watch', static_configs: [{ targets: [target] }] }] }));
    procs.push(spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' }));
    process.stderr.write(`render-dashboard: collecting ${minutes} minutes of data...\n`);
    await new Promise((r) => setTimeout(r, minutes * 60_000));

    const end = Math.floor(Date.now() / 1000);
    const range = { start: end - minutes * 60, end };
    const dashboard = JSON.parse(readFileSync(path.join(root, 'grafana/transfer-watch.json'), 'utf8')) as { title: string; panels: Panel[] };
    const panels = [];
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
      const timeseries = p.type === 'timeseries' || p.type === 'state-timeline';
      const series = [];
      for (const t of p.targets ?? []) {
        for (const r of await query(prom, t.expr, timeseries ? range : undefined)) series.push({ name: legend(r.metric, t.legendFormat), values: r.values.map(([ts, v]) => [ts, Number(v)]) });
      }
      panels.push({ title: p.title, type: timeseries ? 'timeseries' : p.type, gridPos: p.gridPos, series });
    }
    const uplot = readFileSync(path.join(root, 'node_modules/uplot/dist/uPlot.iife.min.js'), 'utf8');
    const css = readFileSync(path.join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
    const html = `<!doctype html><html><head><meta charset="utf-8"><style>${css}
body{margin:0;background:#111217;color:#ccccdc;font:12px sans-serif}h1{font-size:16px;margin:8px 12px}
#grid{display:grid;grid-template-columns:repeat(24,1fr);grid-auto-rows:30px;gap:6px;padding:0 8px 8px}
.panel{background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:4px 6px;overflow:hidden}.title{font-weight:600;margin-bottom:2px}
.stat{font-size:28px;color:#73bf69;margin-top:6px}.bar{height:10px;background:#5794f2;margin:2px 0}.u-legend{font-size:10px}.u-legend .u-series{padding:0 4px}</style></head>
<body><h1>${dashboard.title} — the first ${minutes} minutes of <code>transfer-watch demo</code>, every panel's own query asked of a real Prometheus</h1><div id="grid"></div>
<script>${uplot}</script><script>const panels=${JSON.stringify(panels)};
const grid=document.getElementById('grid');const colors=['#73bf69','#f2cc0c','#5794f2','#ff9830','#f2495c','#b877d9','#8ab8ff','#ffcb7d'];
for(const p of panels){const el=document.createElement('div');el.className='panel';el.style.gridColumn=(p.gridPos.x+1)+' / span '+p.gridPos.w;el.style.gridRow=(p.gridPos.y+1)+' / span '+p.gridPos.h;
el.innerHTML='<div class="title"></div>';el.firstChild.textContent=p.title;grid.appendChild(el);
if(p.type==='timeseries'){const xs=[...new Set(p.series.flatMap(s=>s.values.map(v=>v[0])))].sort((a,b)=>a-b);
const data=[xs,...p.series.map(s=>{const m=new Map(s.values);return xs.map(x=>m.has(x)?m.get(x):null)})];
const legend=p.series.length<=6;const w=el.clientWidth-12,h=el.clientHeight-(legend?26+14*Math.ceil(p.series.length/3):26);new uPlot({width:w,height:h,legend:{show:legend,live:false},axes:[{stroke:'#8e8e8e',grid:{stroke:'#2c3235'}},{stroke:'#8e8e8e',grid:{stroke:'#2c3235'},size:64}],
series:[{},...p.series.map((s,i)=>({label:s.name.slice(0,40),stroke:colors[i%colors.length],width:1.5}))]},data,el);}
else if(p.type==='bargauge'){const max=Math.max(1,...p.series.map(s=>s.values[0]?.[1]??0));for(const s of p.series.slice(0,6)){const r=document.createElement('div');r.textContent=s.name+': '+(s.values[0]?.[1]??0).toFixed(2);const b=document.createElement('div');b.className='bar';b.style.width=(100*(s.values[0]?.[1]??0)/max)+'%';el.appendChild(r);el.appendChild(b);}}
else{for(const s of p.series.length?p.series:[{name:'',values:[]}]){const d=document.createElement('div');d.className='stat';const v=s.values[0]?Number(s.values[0][1]):NaN;d.textContent=Number.isNaN(v)?'no data':v.toFixed(v%1?2:0);if(p.series.length>1){d.style.fontSize='16px';d.textContent=s.name.slice(0,40)+': '+d.textContent;}el.appendChild(d);}}}
</script></body></html>`;
    writeFileSync(path.join(dir, 'dashboard.html'), html);
    const browser = await chromium.launch({
      executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
      await page.goto(`file://${path.join(dir, 'dashboard.html')}`);
      await page.waitForTimeout(500);
      await page.screenshot({ path: out, fullPage: true });
    } finally {
      await browser.close();
    }
    process.stderr.write(`render-dashboard: wrote ${path.relative(process.cwd(), out)} (${panels.length} panels)\n`);
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
