import { BUCKET_MS, type HistoryEntry, type HistoryGenerator, type StoredRecord } from './generator.js';
import type { ReportQuery } from './report-query.js';

/** Where a page ended: the key of the last record it returned. */
export interface Cursor {
  readonly time: number;
  readonly seq: number;
}

export interface HistoryPage {
  readonly entries: HistoryEntry[];
  /** Whether a matching record follows the page. */
  readonly more: boolean;
  readonly last: Cursor | null;
}

/** Injected records sort after generated ones of the same millisecond (generated seqs are bucket indexes). */
const INJECTED_SEQ_BASE = 1_000_000_000;

function after(a: Cursor, b: Cursor): boolean {
  return a.time > b.time || (a.time === b.time && a.seq > b.seq);
}

function matches(r: StoredRecord, q: ReportQuery): boolean {
  if (q.events.length > 0 && !q.events.includes(r.EVENTO)) return false;
  if (q.results === 0 && r.RESULTADO !== 0) return false;
  if (q.results === -1 && r.RESULTADO === 0) return false;
  if (q.instance !== undefined && r.INSTANCE !== q.instance) return false;
  if (q.user !== undefined && r.USUARIO !== q.user) return false;
  // "File name to search": a substring, so both a base name and a full path find the file.
  if (q.filename !== undefined && !r.NOMEARQUIVO.includes(q.filename)) return false;
  if (q.tags.length > 0) {
    const tags = r.TAGS.split(',').map((t) => t.trim());
    if (!q.tags.every((t) => tags.includes(t))) return false;
  }
  return true;
}

/**
 * The service's history: generated records (optional) merged with injected ones, in (time, seq) order.
 * Only records with DATAHORA <= now exist yet, so the history grows as the clock passes them.
 */
export class History {
  private readonly injected: HistoryEntry[] = [];
  private injectedCount = 0;

  constructor(private readonly generator: HistoryGenerator | null) {}

  inject(records: readonly StoredRecord[]): void {
    for (const record of records) {
      this.injected.push({ time: Date.parse(record.DATAHORA), seq: INJECTED_SEQ_BASE + this.injectedCount++, record });
    }
    this.injected.sort((a, b) => a.time - b.time || a.seq - b.seq);
  }

  /**
   * Up to `limit` records matching `q`, with time in [q.start, min(q.end, now)], after `from` (exclusive)
   * or else from the start of the range, first skipping `skip` matching records. Cost is proportional to
   * the records scanned, never to the whole history.
   */
  page(q: ReportQuery, now: number, from: Cursor | null, skip: number, limit: number): HistoryPage {
    const entries: HistoryEntry[] = [];
    let toSkip = skip;
    let last: Cursor | null = null;
    for (const entry of this.scan(q, now, from)) {
      if (!matches(entry.record, q)) continue;
      if (toSkip > 0) {
        toSkip--;
        continue;
      }
      if (entries.length === limit) return { entries, more: true, last };
      entries.push(entry);
      last = entry;
    }
    return { entries, more: false, last };
  }

  private *scan(q: ReportQuery, now: number, from: Cursor | null): Generator<HistoryEntry> {
    const end = Math.min(q.end, now);
    if (end < q.start) return;
    const first: Cursor = from ?? { time: q.start, seq: -1 };
    const inRange = (e: HistoryEntry): boolean => e.time >= q.start && e.time <= end && after(e, first);

    let i = this.firstInjectedAfter(first);
    const nextInjected = (): HistoryEntry | undefined => {
      const e = this.injected[i];
      return e !== undefined && e.time <= end ? e : undefined;
    };
    for (const generated of this.generated(q, first.time, end)) {
      if (!inRange(generated)) continue;
      for (let inj = nextInjected(); inj !== undefined && !after(inj, generated); inj = nextInjected()) {
        i++;
        if (inRange(inj)) yield inj;
      }
      yield generated;
    }
    for (let inj = nextInjected(); inj !== undefined; inj = nextInjected()) {
      i++;
      if (inRange(inj)) yield inj;
    }
  }

  private *generated(q: ReportQuery, from: number, end: number): Generator<HistoryEntry> {
    const g = this.generator;
    if (g === null) return;
    // A filter no generated record can satisfy must not walk years of minutes.
    if (q.instance !== undefined && !g.instances.has(q.instance)) return;
    if (q.user !== undefined && !g.users.has(q.user)) return;
    const firstBucket = Math.floor(Math.max(from, g.historyStart) / BUCKET_MS);
    const lastBucket = Math.floor(end / BUCKET_MS);
    for (let b = firstBucket; b <= lastBucket; b++) yield* g.bucket(b);
  }

  private firstInjectedAfter(c: Cursor): number {
    let lo = 0;
    let hi = this.injected.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = this.injected[mid];
      if (e !== undefined && !after(e, c)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
