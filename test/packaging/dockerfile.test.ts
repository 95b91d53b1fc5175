import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';

/**
 * No Docker engine runs here: this reads the Dockerfile and checks what the official Node image guidance
 * asks for. production-install.test.ts proves that the production-only install it makes actually runs.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const joined = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] as string).toUpperCase();
    const args = (m[2] as string).trim();
    if (op === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(args);
      stages.push({ from: from?.[1] ?? '', name: from?.[2], instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ op, args });
    }
  }
  return stages;
}

const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const runtime = stages.at(-1) as Stage;
const all = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);
const exec = (args: string): unknown => JSON.parse(args);

describe('Dockerfile', () => {
  it('is multi-stage on the official Node 24 slim image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const argDefault = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    for (const stage of stages) {
      const image = stage.from === '${NODE_IMAGE}' ? argDefault : stage.from;
      expect(image, `FROM ${stage.from}`).toMatch(/^node:24(\.\d+)*-(\w+-)?slim(@sha256:[0-9a-f]{64})?$/);
    }
  });

  it('builds with dev dependencies, and the runtime stage gets production dependencies only', () => {
    const build = stages.find((s) => all(s, 'RUN').some((r) => /npm run build/.test(r)));
    expect(build, 'a stage runs npm run build').toBeDefined();
    expect(all(build as Stage, 'RUN').some((r) => /npm ci(?!.*--omit=dev)/.test(r)), 'the build stage installs dev dependencies').toBe(true);
    expect(build).not.toBe(runtime);

    const copies = all(runtime, 'COPY').filter((c) => c.startsWith('--from='));
    const modules = copies.filter((c) => /node_modules/.test(c));
    expect(modules.length, 'node_modules comes from another stage').toBe(1);
    const fromStage = /^--from=(\S+)/.exec(modules[0] as string)?.[1];
    const source = stages.find((s) => s.name === fromStage);
    expect(source, `stage ${fromStage}`).toBeDefined();
    const installsProdOnly = all(source as Stage, 'RUN').some((r) => /npm (ci|install|prune)\b.*--omit=dev/.test(r));
    expect(installsProdOnly, `stage ${fromStage} installs with --omit=dev`).toBe(true);
    expect(all(source as Stage, 'RUN').some((r) => /npm ci(?!.*--omit=dev)/.test(r)), `stage ${fromStage} installs no dev dependency`).toBe(false);
    // From the build stage only the compiled output.
    const fromBuild = copies.filter((c) => c.startsWith(`--from=${build?.name} `));
    expect(fromBuild.map((c) => c.split(/\s+/)[1])).toEqual(['/app/dist']);
    expect(all(runtime, 'RUN').join('\n')).not.toMatch(/npm (ci|install)/);
  });

  it('runs as the non-root node user, with state under a volume and the config at /etc/transfer-watch', () => {
    const user = all(runtime, 'USER').at(-1);
    expect(user).toBe('node');
    expect(all(runtime, 'VOLUME').map(exec)).toContainEqual(['/var/lib/transfer-watch']);
    expect(all(runtime, 'RUN').join('\n')).toMatch(/chown node:node \/var\/lib\/transfer-watch/);
    expect(all(runtime, 'EXPOSE')).toEqual(['9464']);
    expect(all(runtime, 'ENV').join(' ')).toMatch(/NODE_ENV=production/);
    expect(all(runtime, 'ENV').join(' ')).toMatch(/TRANSFER_WATCH_STATE_DIR=\/var\/lib\/transfer-watch/);
    expect(all(runtime, 'ENV').join(' ')).toMatch(/MALLOC_ARENA_MAX=2/);
    expect(all(runtime, 'ENV').join(' ')).toMatch(/MALLOC_MMAP_THRESHOLD_=131072/);
    expect(readFileSync(path.join(root, 'config.example.yaml'), 'utf8')).toMatch(/dir: \$\{TRANSFER_WATCH_STATE_DIR:-/);
    expect(all(runtime, 'COPY')).toContain('config.example.yaml /etc/transfer-watch/config.yaml');
  });

  it("passes node only V8 flags this Node accepts (an unknown flag would stop the container from starting)", () => {
    const entry = exec(all(runtime, 'ENTRYPOINT').at(-1) ?? '') as string[];
    const flags = entry.slice(1, -1);
    expect(flags.length).toBeGreaterThan(0);
    const out = execFileSync(process.execPath, [...flags, '-e', "process.stdout.write(String(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size))"], { encoding: 'utf8' });
    // --max-semi-space-size=4: the new space (two semi-spaces) never exceeds 8 MB.
    expect(Number(out)).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  it('starts node in exec form (signals reach the daemon) and runs `run --config /etc/transfer-watch/config.yaml`', () => {
    const entry = exec(all(runtime, 'ENTRYPOINT').at(-1) ?? '') as string[];
    expect(entry).toEqual(['node', '--max-semi-space-size=4', '--no-maglev', '/app/dist/cli/main.js']);
    expect(exec(all(runtime, 'CMD').at(-1) ?? '')).toEqual(['run', '--config', '/etc/transfer-watch/config.yaml']);
    const health = all(runtime, 'HEALTHCHECK').at(-1) ?? '';
    const cmd = exec(health.replace(/^.*?CMD\s+/, '')) as string[];
    expect(cmd[0]).toBe('node');
    expect(cmd.join(' ')).toMatch(/\/healthz/);
    expect(health).not.toMatch(/curl|wget/);
  });

  it('has OCI labels', () => {
    const labels = all(runtime, 'LABEL').join(' ');
    for (const key of ['title', 'description', 'version', 'source', 'licenses']) expect(labels).toContain(`org.opencontainers.image.${key}=`);
  });

  it('copies only files that exist and that .dockerignore lets into the build context', () => {
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    // Docker's rules: patterns apply in order, the last one that matches decides, `!` lets a path back in.
    const rules = ignore.map((line) => {
      const negated = line.startsWith('!');
      const pattern = negated ? line.slice(1) : line;
      return { negated, match: picomatch([pattern, `${pattern}/**`], { dot: true }) };
    });
    const ignored = (file: string): boolean => rules.reduce((verdict, r) => (r.match(file) ? !r.negated : verdict), false);
    for (const stage of stages) {
      for (const copy of all(stage, 'COPY').filter((c) => !c.startsWith('--from='))) {
        const parts = copy.split(/\s+/).filter((p) => !p.startsWith('--'));
        for (const src of parts.slice(0, -1)) {
          const base = src.replace(/\/?\*.*$/, '');
          expect(existsSync(path.join(root, base)), `COPY source ${src}`).toBe(true);
          expect(ignored(base), `COPY source ${src} is excluded by .dockerignore`).toBe(false);
        }
      }
    }
    for (const kept of ['node_modules', 'dist', '.git', 'data']) expect(ignored(kept), `${kept} should be in .dockerignore`).toBe(true);
  });
});
