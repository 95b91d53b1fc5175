import type { Document, LineCounter, Node, Pair } from 'yaml';
import { isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { Problem } from './problem.js';

export type PathSegment = string | number;

/**
 * Finds where a value path (`['sources', 0, 'timeout']`) sits in the original YAML text, so every problem
 * can be reported as FILE:LINE:COL. When the path does not exist in the file (a missing key, or a key
 * that a loader renamed) the nearest existing ancestor is used, which still points the user to the
 * right block.
 */
export class YamlLocator {
  constructor(
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
    readonly file: string,
  ) {}

  /** The node at `path`, or undefined when the path does not exist in the file. */
  nodeAt(path: readonly PropertyKey[]): Node | undefined {
    const found = this.walk(path);
    return found.complete ? (found.node ?? undefined) : undefined;
  }

  /** Offset of the key (`where: 'key'`) or of the value at `path`, falling back to the nearest ancestor. */
  offsetOf(path: readonly PropertyKey[], where: 'key' | 'value' = 'value'): number {
    const found = this.walk(path);
    if (found.complete && where === 'key' && found.pair && isScalar(found.pair.key) && found.pair.key.range) {
      return found.pair.key.range[0];
    }
    // `key:` with an empty value: the empty scalar sits past the colon; the key is what the user sees.
    const empty = isScalar(found.node) && found.node.range && found.node.range[0] === found.node.range[1];
    if (found.node?.range && !empty) return found.node.range[0];
    // `key:` with no value: point at the key.
    if (found.pair && isScalar(found.pair.key) && found.pair.key.range) return found.pair.key.range[0];
    return this.doc.contents?.range?.[0] ?? 0;
  }

  problemAt(path: readonly PropertyKey[], message: string, where: 'key' | 'value' = 'value'): Problem {
    return this.problemAtOffset(this.offsetOf(path, where), message);
  }

  problemAtOffset(offset: number, message: string): Problem {
    const { line, col } = this.lineCounter.linePos(offset);
    return { file: this.file, line, col, message };
  }

  private walk(path: readonly PropertyKey[]): { node: Node | null; pair?: Pair; complete: boolean } {
    let node: Node | null = this.doc.contents;
    let pair: Pair | undefined;
    for (const [index, segment] of path.entries()) {
      if (isAlias(node)) node = node.resolve(this.doc) ?? null;
      if (isMap(node)) {
        const next = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
        if (!next) return { node, pair, complete: false };
        pair = next;
        node = isNodeOrNull(next.value);
        if (node === null) return { node: null, pair, complete: index === path.length - 1 };
      } else if (isSeq(node) && typeof segment === 'number') {
        const next = node.items[segment];
        if (next === undefined) return { node, pair, complete: false };
        pair = undefined;
        node = isNodeOrNull(next);
      } else {
        return { node, pair, complete: false };
      }
    }
    return { node, pair, complete: true };
  }
}

function isNodeOrNull(value: unknown): Node | null {
  if (isScalar(value) || isMap(value) || isSeq(value) || isAlias(value)) return value;
  return null;
}
