/** A key's usual arrival learned from the SLA ledger (contract section 13, `warn_before: auto`). */
export interface UsualArrival {
  /** The p95 of (arrival − deadline) over the judged occurrences, ms (negative: before the deadline); Infinity when too many never came. */
  p95OffsetMs: number;
  /** How many judged occurrences it is from (at most 30). */
  judged: number;
}

/** Judged occurrences a key's usual arrival is learned from (contract section 13). */
export const USUAL_ARRIVAL_OCCURRENCES = 30;

export interface JudgedOccurrence {
  keyText: string;
  deadline: number;
  /** null: it never came (missing). */
  arrivedAt: number | null;
}

/**
 * Each key's usual arrival for `warn_before: auto`: the p95 of (arrival − deadline) over its last 30 judged
 * occurrences in the ledger (a missing one counts as never: a key that often misses warns late, a minute before).
 * Kept per rule, refreshed by the leader from the ledger; read by the rules at every evaluation.
 */
export class UsualArrivals {
  private readonly byRule = new Map<string, Map<string, UsualArrival>>();

  get(rule: string, keyText: string): UsualArrival | undefined {
    return this.byRule.get(rule)?.get(keyText);
  }

  /** A rule's occurrences, newest first (the ledger's `recentJudged`), replace what was learned for it. */
  learn(rule: string, judged: readonly JudgedOccurrence[]): void {
    const perKey = new Map<string, number[]>();
    for (const o of judged) {
      const offsets = perKey.get(o.keyText) ?? [];
      if (offsets.length >= USUAL_ARRIVAL_OCCURRENCES) continue;
      offsets.push(o.arrivedAt === null ? Infinity : o.arrivedAt - o.deadline);
      perKey.set(o.keyText, offsets);
    }
    const learned = new Map<string, UsualArrival>();
    for (const [key, offsets] of perKey) {
      offsets.sort((a, b) => a - b);
      const p95 = offsets[Math.min(offsets.length - 1, Math.ceil(0.95 * offsets.length) - 1)] as number;
      learned.set(key, { p95OffsetMs: p95, judged: offsets.length });
    }
    this.byRule.set(rule, learned);
  }

  forget(keep: ReadonlySet<string>): void {
    for (const rule of this.byRule.keys()) if (!keep.has(rule)) this.byRule.delete(rule);
  }
}
