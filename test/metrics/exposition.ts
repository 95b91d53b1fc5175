/**
 * A small parser of the Prometheus text exposition format, so tests assert on what a scraper sees
 * rather than on prom-client internals.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

// `s`: a label value may hold a carriage return or U+2028 unescaped, which `.` would not match.
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\d+)?$/s;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;

function unescapeLabel(v: string): string {
  return v.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const typeMatch = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (typeMatch?.[1] && typeMatch[2]) {
      types.set(typeMatch[1], typeMatch[2]);
      continue;
    }
    const helpMatch = /^# HELP (\S+) (.*)$/.exec(line);
    if (helpMatch?.[1] && helpMatch[2] !== undefined) {
      help.set(helpMatch[1], helpMatch[2]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE_LINE.exec(line);
    if (!m?.[1] || m[4] === undefined) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(LABEL_PAIR)) {
      if (pair[1] !== undefined && pair[2] !== undefined) labels[pair[1]] = unescapeLabel(pair[2]);
    }
    samples.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return { types, help, samples };
}

/** Samples of one series name whose labels include all of `match`. */
export function samplesOf(expo: Exposition, name: string, match: Record<string, string> = {}): Sample[] {
  return expo.samples.filter(
    (s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v),
  );
}

/** The single value of a series; throws when there is not exactly one match. */
export function valueOf(expo: Exposition, name: string, match: Record<string, string> = {}): number {
  const found = samplesOf(expo, name, match);
  if (found.length !== 1) {
    throw new Error(`expected one sample of ${name}${JSON.stringify(match)}, found ${found.length}`);
  }
  const [only] = found;
  if (!only) throw new Error('unreachable');
  return only.value;
}
