import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from '../base/problem.js';

/**
 * A YAML document parsed with node positions, so validation problems can point at FILE:LINE:COL.
 * Rule files and rule test files are both read through this.
 */
export interface PositionedYaml {
  file: string;
  doc: Document;
  lines: LineCounter;
  /** YAML syntax errors, already as problems. */
  problems: Problem[];
}

export function parseYamlWithPositions(file: string, text: string): PositionedYaml {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const problems: Problem[] = [...doc.errors, ...doc.warnings].map((e) => {
    const pos = lines.linePos(e.pos[0]);
    return { file, line: pos.line, col: pos.col, message: e.message.split('\n')[0] ?? e.message };
  });
  return { file, doc, lines, problems };
}

/**
 * The problem position for a zod issue path: the deepest node that exists along `path`. With `key`, the
 * position of that key inside the map at `path` (unknown keys point at themselves, not at their parent).
 */
export function problemAt(y: PositionedYaml, path: readonly PropertyKey[], message: string, key?: string): Problem {
  let node: unknown = y.doc.contents;
  let best: Node | undefined = isNode(node) ? node : undefined;
  const steps = key === undefined ? path : [...path, key];
  for (const step of steps) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(step));
      if (!pair) break;
      if (key !== undefined && step === key && isNode(pair.key)) {
        best = pair.key;
        break;
      }
      node = pair.value;
    } else if (isSeq(node) && typeof step === 'number') {
      node = node.items[step];
    } else {
      break;
    }
    if (isNode(node)) best = node;
    else break;
  }
  const offset = best?.range?.[0] ?? 0;
  const pos = y.lines.linePos(offset);
  return { file: y.file, line: pos.line, col: pos.col, message };
}
