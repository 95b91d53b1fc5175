/**
 * A problem found in a config or rule file, reported as `FILE:LINE:COL: message` (1-based line and column).
 * Every loader returns these instead of throwing on the first one, so `check` can list them all.
 */
export interface Problem {
  file: string;
  line: number;
  col: number;
  message: string;
}

export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.message}`;
}
