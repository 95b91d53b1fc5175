/**
 * The shape of a file name: its constant text with the parts that may vary from one file of a flow to the next
 * (digit runs, hexadecimal ids, UUIDs) taken out as "runs". Files of one flow share a shape; what each run holds
 * across them decides whether the flow's pattern keeps it (a constant `BANK1` or `CNAB240`) or writes `*` (a date,
 * a time, a sequence number, an id).
 */

/** A shape: the constant pieces around the runs (`pieces.length === runs + 1`), and its key (`#` per run). */
export interface NameShape {
  readonly key: string;
  readonly pieces: readonly string[];
  readonly values: readonly string[];
}

/** What a flow's files held in one run: enough to write the pattern without keeping the names. */
export interface RunSummary {
  /** The first value seen. */
  first: string;
  /** Whether another value was seen. */
  varies: boolean;
  minLength: number;
  maxLength: number;
  /** Whether a value looked like a date or a year (kept variable even if it did not change in the period read). */
  dateLike: boolean;
}

/** UUIDs and long hexadecimal ids are one run each; otherwise every digit run is one. */
const RUN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9A-Za-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{12,}(?![0-9A-Za-z])|\d+/gi;

const MAX_NAME = 1024;

/** Splits a file name into its shape. One pass of one regex: discover reads every successful transfer through it. */
export function nameShape(fullName: string): NameShape {
  // A name from the service can be megabytes long (the hostile probe sent 10 MB fields); its shape is its start.
  const name = fullName.length > MAX_NAME ? fullName.slice(0, MAX_NAME) : fullName;
  const pieces: string[] = [];
  const values: string[] = [];
  let last = 0;
  RUN.lastIndex = 0;
  for (let m = RUN.exec(name); m !== null; m = RUN.exec(name)) {
    pieces.push(name.slice(last, m.index));
    values.push(m[0]);
    last = m.index + m[0].length;
  }
  pieces.push(name.slice(last));
  return { key: pieces.join('#'), pieces, values };
}

function validDate(y: number, m: number, d: number): boolean {
  return y >= 1990 && y <= 2099 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

/**
 * Whether a run is (or begins with) a calendar date or a year: `2026`, `202611`, `20261127`, `27112026`,
 * `261127`, `20261127071500`. A date that did not change while the history was read (a year, or a month in a
 * short read) must still be `*`, or the proposed rule stops matching on the first of the next month.
 */
export function looksLikeDate(run: string): boolean {
  if (!/^\d+$/.test(run)) return false;
  const n = (from: number, to: number): number => Number(run.slice(from, to));
  switch (run.length) {
    case 4:
      return n(0, 4) >= 1990 && n(0, 4) <= 2099;
    case 6:
      return (n(0, 4) >= 1990 && n(0, 4) <= 2099 && n(4, 6) >= 1 && n(4, 6) <= 12) || validDate(2000 + n(0, 2), n(2, 4), n(4, 6));
    case 8:
      return validDate(n(0, 4), n(4, 6), n(6, 8)) || validDate(n(4, 8), n(2, 4), n(0, 2));
    default:
      return run.length > 8 && validDate(n(0, 4), n(4, 6), n(6, 8));
  }
}

/** Between the pieces in a flow's key: no file name holds it (a control character). */
export const RUN_MARK = '\u0001';

/**
 * The shape's pieces joined by RUN_MARK (the key of a flow's name shape), and its run values pushed to `values`: one
 * `replace` over the name, the hot path of discover (a full `nameShape` is made only for a flow's first file).
 */
export function shapeKey(fullName: string, values: string[]): string {
  const name = fullName.length > MAX_NAME ? fullName.slice(0, MAX_NAME) : fullName;
  return name.replace(RUN, (run) => {
    values.push(run);
    return RUN_MARK;
  });
}

export function newRunSummaries(values: readonly string[]): RunSummary[] {
  return values.map((v) => ({ first: v, varies: false, minLength: v.length, maxLength: v.length, dateLike: looksLikeDate(v) }));
}

/** Adds one file's run values to its flow's summaries (same shape, so the same number of runs). */
export function addRunValues(runs: RunSummary[], values: readonly string[]): void {
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i] as RunSummary;
    const v = values[i] as string;
    if (v === run.first) continue;
    run.varies = true;
    if (v.length < run.minLength) run.minLength = v.length;
    if (v.length > run.maxLength) run.maxLength = v.length;
    if (!run.dateLike && looksLikeDate(v)) run.dateLike = true;
  }
}

/** Two summaries of the same shape as one (days read apart, or replicas' summaries). */
export function mergeRunSummaries(into: RunSummary[], from: readonly RunSummary[]): void {
  for (let i = 0; i < into.length; i++) {
    const a = into[i] as RunSummary;
    const b = from[i];
    if (!b) continue;
    if (b.varies || b.first !== a.first) a.varies = true;
    a.minLength = Math.min(a.minLength, b.minLength);
    a.maxLength = Math.max(a.maxLength, b.maxLength);
    a.dateLike ||= b.dateLike;
  }
}

/**
 * The glob of a flow (the rules' language: `*` and `?`, neither crossing `/`): constant runs as they are, the
 * others `*`, or `?` per character when `strict` and the run always had one length (to stay clear of another
 * flow's files that the looser pattern would match).
 */
export function shapePattern(pieces: readonly string[], runs: readonly RunSummary[], strict = false): string {
  const dated = datedRuns(pieces, runs);
  let out = literalGlob(pieces[0] ?? '');
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i] as RunSummary;
    if (!run.varies && !run.dateLike && !dated.has(i)) out += run.first;
    else if (strict && run.minLength === run.maxLength) out += '?'.repeat(run.minLength);
    else if (!out.endsWith('*')) out += '*';
    out += literalGlob(pieces[i + 1] ?? '');
  }
  return out;
}

/**
 * Constant text of a name as a glob: the rules' glob language has no escape (contract section 5), so a literal `*` or
 * `?` in a file name is written `?` — it matches that character (and any other one), where a `*` written as is would
 * match whole runs of others' names (issue 52: `REPORT*.TXT` proposed for the one file named so).
 */
export function literalGlob(text: string): string {
  return text.replace(/[*?]/g, '?');
}

/** One character between two runs of a written date: `2026-11-27`, `27.11.2026`, `2026_11_27`. */
const DATE_SEPARATOR = /^[-_.]$/;

/**
 * The runs of dates written with separators: a year (a four-digit run that looks like one) and the one- or
 * two-digit runs joined to it by single separators, up to three in all. The month of `FEED_2026-11-25.xml` did not
 * change in a short read, but it is a date all the same.
 */
function datedRuns(pieces: readonly string[], runs: readonly RunSummary[]): Set<number> {
  const dated = new Set<number>();
  const short = (i: number): boolean => {
    const r = runs[i];
    return r !== undefined && r.maxLength <= 2 && /^\d+$/.test(r.first);
  };
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i] as RunSummary;
    if (run.first.length !== 4 || !run.dateLike) continue;
    dated.add(i);
    for (let j = i + 1; j <= i + 2 && short(j) && DATE_SEPARATOR.test(pieces[j] ?? ''); j++) dated.add(j);
    for (let j = i - 1; j >= i - 2 && short(j) && DATE_SEPARATOR.test(pieces[j + 1] ?? ''); j--) dated.add(j);
  }
  return dated;
}
