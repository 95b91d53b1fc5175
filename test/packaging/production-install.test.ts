import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_ENV } from './example-env.js';

/**
 * What the Dockerfile's runtime stage does, without Docker: the packed package installed with production
 * dependencies only, in a folder of its own, then `check` and a short `demo` from there. A file the package
 * forgot to ship, or a dev dependency needed at run time, fails here. Needs the npm registry (or its cache).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

let tmp: string;
let app: string;
let packed: string[] = [];
/** Whether this node has node:sqlite (the history's SQLite then; better-sqlite3 otherwise). */
let builtinSqlite = false;

/** The installed CLI, run with this test's node (the bin's shebang would pick whatever node is on PATH). */
const bin = () => path.join(app, 'node_modules', '.bin', 'transfer-watch');

beforeAll(async () => {
  expect(existsSync(path.join(root, 'dist/cli/main.js')), 'dist/ is missing: run `npm run build` first (npm test does)').toBe(true);
  tmp = mkdtempSync(path.join(os.tmpdir(), 'tw-pack-'));
  // --ignore-scripts: dist/ is already built by `npm test`; prepack would compile it again.
  const { stdout } = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: root });
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = info?.files.map((f) => f.path) ?? [];
  app = path.join(tmp, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'tw-install-check', version: '1.0.0', private: true }));
  // Where the runtime has node:sqlite (Node 24, the image's), installed as the image installs it: without the
  // optional better-sqlite3 (Dockerfile: --omit=optional), whose compilation was a minute of every CI run.
  const sqliteModule = 'node:sqlite';
  builtinSqlite = await import(/* @vite-ignore */ sqliteModule).then(
    () => true,
    () => false,
  );
  // On Node 20, better-sqlite3 (the history's SQLite there, an optional dependency) has no prebuilt binary this
  // machine can download, and node-gyp compiled it here again: 100 s of every CI run. The binary `npm ci` compiled
  // for this very node is handed to its installer as a local prebuild (prebuild-install's offline path), as an
  // operator without internet access does; what is checked is the package, not the compiler.
  const env: NodeJS.ProcessEnv = { ...process.env };
  const sqliteDir = path.join(root, 'node_modules', 'better-sqlite3');
  const sqliteBinary = path.join(sqliteDir, 'build', 'Release', 'better_sqlite3.node');
  if (!builtinSqlite && existsSync(sqliteBinary)) {
    const { version } = JSON.parse(readFileSync(path.join(sqliteDir, 'package.json'), 'utf8')) as { version: string };
    const prebuilds = path.join(tmp, 'prebuilds');
    mkdirSync(prebuilds);
    const tarball = path.join(prebuilds, `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`);
    await run('tar', ['-czf', tarball, '-C', sqliteDir, 'build/Release/better_sqlite3.node']);
    env['npm_config_better_sqlite3_local_prebuilds'] = prebuilds;
  }
  // --prefer-offline: the packages `npm ci` just fetched are in npm's cache; the registry is asked only for the rest.
  await run(npm, ['install', '--omit=dev', ...(builtinSqlite ? ['--omit=optional'] : []), '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', path.join(tmp, info?.filename ?? '')], {
    cwd: app,
    env,
    timeout: 360_000,
  });
}, 400_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed package, installed with production dependencies only', () => {
  it('ships the files it needs at run time and no sources or tests', () => {
    for (const file of ['dist/cli/main.js', 'package.json', 'README.md', 'config.example.yaml', 'schemas/config.schema.json', 'schemas/rules.schema.json', 'grafana/transfer-watch.json', 'prometheus/transfer-watch.rules.yaml']) {
      expect(packed, file).toContain(file);
    }
    expect(packed.some((f) => /^rules\/[^/]+\.yaml$/.test(f)), 'rules/*.yaml (the demo loads them)').toBe(true);
    expect(packed.filter((f) => /^(src|test|bench|scripts|helm)\//.test(f))).toEqual([]);
  });

  it('names no entry point that is not in the package (package.json "main", "bin")', () => {
    const installed = path.join(app, 'node_modules', 'transfer-watch');
    const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { main?: string; bin?: Record<string, string> };
    for (const file of [pkg.main, ...Object.values(pkg.bin ?? {})].filter((f): f is string => f !== undefined)) {
      expect(existsSync(path.join(installed, file)), file).toBe(true);
    }
  });

  it('has the history’s SQLite driver this node needs: better-sqlite3 installed and loading on Node 20, none on a node with node:sqlite', async () => {
    const installed = existsSync(path.join(app, 'node_modules', 'better-sqlite3'));
    expect(installed).toBe(!builtinSqlite);
    if (!builtinSqlite) {
      const { stdout } = await run(process.execPath, ['-e', "const D = require('better-sqlite3'); console.log(new D(':memory:').prepare('select 41 + 1 as n').get().n)"], { cwd: app });
      expect(stdout.trim()).toBe('42');
    }
  });

  it('has no dev dependency in node_modules', () => {
    // @types/* may come in as a dependency of a runtime package; they contain no code.
    const present = Object.keys(pkg.devDependencies).filter((d) => !d.startsWith('@types/') && existsSync(path.join(app, 'node_modules', d)));
    expect(present).toEqual([]);
    expect(existsSync(path.join(app, 'node_modules/transfer-watch/dist/cli/main.js'))).toBe(true);
  });

  it('`check` passes the shipped example config and rules', async () => {
    const example = path.join(app, 'node_modules/transfer-watch/config.example.yaml');
    const { stdout } = await run(process.execPath, [bin(), 'check', '--config', example], { cwd: app, env: { ...process.env, ...EXAMPLE_ENV } });
    expect(stdout).toContain(`OK: ${example}`);
    expect(stdout).toContain(path.join(app, 'node_modules/transfer-watch/rules/transfers.yaml'));
  });

  it('`demo --port 0` serves metrics and exits 0 on SIGTERM', async () => {
    let proc: ChildProcess | undefined;
    try {
      proc = spawn(process.execPath, [bin(), 'demo', '--port', '0', '--state-dir', path.join(tmp, 'demo-state')], {
        cwd: app,
        env: { ...process.env, NODE_ENV: 'production' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const child = proc;
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let out = '';
      let err = '';
      child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const metricsUrl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no metrics URL line within 30 s; stdout: ${out}\nstderr: ${err}`)), 30_000);
        child.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /metrics:\s+(http:\/\/\S+\/metrics)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1] as string);
          }
        });
        void exited.then((code) => reject(new Error(`demo exited with ${code}; stderr: ${err}`)));
      });
      const res = await fetch(metricsUrl);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^transfer_watch_source_up\{source="demo"\} [01]$/m);
      expect(text).toMatch(/^# TYPE mft_transfers_total counter$/m);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
  });
});
