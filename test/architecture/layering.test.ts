import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layering of src/ (issue 16), from the imports themselves: folders form no cycle; the bottom layers (util/,
 * then base/) import nothing above them; only the top (cli/, daemon/) imports config/'s assembly, so every
 * stage owns its slice of the configuration schema and receives only that slice.
 */
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/** folder → folders it imports (relative imports, `import type` included), with one file that does each. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of files(src)) {
    const from = path.relative(src, file).split(path.sep)[0] ?? '';
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const to = path.relative(src, path.resolve(path.dirname(file), m[1] ?? '')).split(path.sep)[0] ?? '';
      if (to === from || to.startsWith('..')) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      graph.get(from)?.set(to, path.relative(src, file));
    }
  }
  return graph;
}

function findCycle(graph: Map<string, Map<string, string>>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (state.get(next) === 'visiting') return [...stack.slice(stack.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    if (state.get(node) !== undefined) continue;
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

describe('layering of src/', () => {
  const graph = folderGraph();

  it('has no cycle between folders', () => {
    const cycle = findCycle(graph);
    const detail = cycle?.slice(0, -1).map((f, i) => `${f} -> ${cycle[i + 1] ?? ''} (${graph.get(f)?.get(cycle[i + 1] ?? '') ?? ''})`);
    expect(detail, 'a cycle between folders').toBeUndefined();
  });

  it('keeps util/ and base/ at the bottom', () => {
    expect([...(graph.get('util')?.keys() ?? [])]).toEqual([]);
    expect([...(graph.get('base')?.keys() ?? [])].filter((f) => f !== 'util')).toEqual([]);
  });

  it('lets only the top (cli/, daemon/) import config/: stages own and receive their slice', () => {
    const importers = [...graph].filter(([, to]) => to.has('config')).map(([from, to]) => `${from} (${to.get('config') ?? ''})`);
    expect(importers.filter((i) => !/^(cli|daemon) /.test(i))).toEqual([]);
  });
});
