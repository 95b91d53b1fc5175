import type { RuleEvaluation } from '../alerts/alert-candidate.js';
import type { Transfer } from '../source/transfer.js';
import type { Clock } from '../util/clock.js';
import { errorFields } from '../util/errors.js';
import { sameItems } from '../util/same-items.js';
import type { Logger } from '../util/logger.js';
import { SeenTransfers } from '../util/seen-transfers.js';
import { EventLoopShare, TimeSlice } from '../util/time-slice.js';
import { CronSchedules } from './cron-schedule.js';
import { compileMatch, selectionKey, type SharedPatternTests, type TransferMatcher } from './match.js';
import { createEvaluator, type RuleDefinition } from './registry.js';
import type { DataCompleteness, EvaluatorContext, ExpectedFile, RuleEvaluator } from './rule-evaluator.js';
import { RuleIndex } from './rule-index.js';
import { TransferParts } from './transfer-parts.js';
import { completeSpan, relevantSources } from './complete-span.js';
import type { OccurrenceRecord, ReadSpan } from '../sla/occurrence.js';
import type { MatchSpec } from './rule-schema.js';

export type { DataCompleteness, ExpectedFile } from './rule-evaluator.js';
export type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';

/** Until how old a kept transfer's id is remembered against a second delivery (by its occurrence time). */
export const DEDUP_SPAN = 30 * 60_000;
/**
 * How far the evaluations' time moves between two prunes of those ids: a prune walks the whole table, and an
 * evaluation every page of a catch-up walked it each time to forget a few seconds' ids (0.8% of the 100-rule
 * bench pipeline's CPU profile). An id is then remembered up to this much longer.
 */
const PRUNE_EVERY = 60_000;

interface EngineEntry {
  rule: RuleDefinition;
  evaluator: RuleEvaluator;
  history: number;
  /**
   * The rule's last evaluation, at `lastAt`, which stands until `lastUntil` unless the rule observes a transfer
   * (see RuleEvaluator.unchangedUntil; an observation ends it). In a catch-up most rules observe nothing between
   * two evaluations (a failure stream is read long before the successes), and 1,000 rules evaluated every 1,000
   * transfers were asked again for the same alerts.
   */
  last: RuleEvaluation | undefined;
  lastAt: number;
  lastUntil: number;
  /**
   * The evaluation last handed on. An evaluation with the same outcome (the same candidates firing, resolved and
   * cleared, in the same order: builders hand an unchanged group's candidate back as it was) is handed on as this
   * one, the same object, and the alert store passes over it in one step. A failure in a group that stays
   * below its threshold asks a rule again for the same alerts; each new evaluation object had the store walk and
   * stamp every alert of the rule.
   */
  handedOn: RuleEvaluation | undefined;
  /**
   * The sources and results the rule reads: while they are not read whole, it judges nothing it does not report. `key`
   * names the pair, so rules that read the same are asked once an evaluation.
   */
  reads: { sources: readonly string[]; results: ReadonlyArray<'success' | 'error'>; key: string };
}

/**
 * The rules of one index that select the same transfers (see `selectionKey`): a transfer runs their matcher once
 * and reaches all of them or none. Rule sets repeat selections (a warning and a critical threshold for one
 * partner, a burst and a ratio for the same files); the bench's 1,000 generated rules make 81 selections.
 */
interface Selection {
  matches: TransferMatcher;
  entries: EngineEntry[];
}

/**
 * Feeds transfers to the rules that match them and evaluates every rule at a given time.
 * A transfer only visits candidate rules from the exact-value index, then their full matchers.
 *
 * The poller hands each transfer on once; the engine still remembers the ids of the transfers its rules kept,
 * so one handed on again by another path (a history re-read racing the live poll after a reload, a stream
 * re-delivered to a new leader) is counted once. Those repeats are of transfers near a stream's cursor, i.e.
 * recent ones, so an id is remembered until its transfer is `DEDUP_SPAN` old (or no rule that kept it can count
 * it any more, if sooner), not for the rule's whole window: a duplicate-file rule's day at 10,000 transfers a
 * minute would be 14 million ids, and a first start reading 100 minutes of history would hold all of them.
 * Transfers no rule kept are not remembered at all.
 */
export class RuleEngine {
  private readonly entries: EngineEntry[];
  /** One index per transfer result, each without the rules that keep only the other result. */
  private readonly index: Record<'success' | 'error', RuleIndex<Selection>>;
  /** Ids of the transfers rules kept, each with the time after which it is forgotten (see DEDUP_SPAN). */
  private readonly seen = new SeenTransfers();
  /** The evaluations' time at which `seen` is next pruned (see PRUNE_EVERY). */
  private nextPrune = -Infinity;
  private readonly history: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly loop: EventLoopShare;
  /**
   * Full matcher runs so far, one per candidate selection: what a record costs beyond the index lookup (a test and
   * metric hook).
   */
  matchChecks = 0;
  /**
   * The rules the transfer being observed matches, in its first slots (one array for every call: `observe` runs to
   * its end; what later slots hold from earlier calls is rules, never read).
   */
  private readonly matched: EngineEntry[] = [];
  /** The candidate lists of the transfer being observed, in the same way. */
  private readonly candidateLists: (readonly Selection[])[] = [];

  constructor(
    rules: RuleDefinition[],
    opts: {
      clock: Clock;
      logger: Logger;
      sources: string[];
      displayTimezone?: string;
      /** Keep every transfer however old (an SLA backfill judges months of deadlines once, then is dropped). */
      keepHistory?: boolean;
      /** The process's event loop, shared with its other long jobs (evaluateInSlices); one of its own by default. */
      loop?: EventLoopShare;
      /**
       * Transfers from this time on are kept even when older than every rule's window: the deadlines of a seam (the
       * time nothing ran, contract section 11b) are judged on them.
       */
      holdFrom?: number;
    } & Pick<EvaluatorContext, 'calendars' | 'onOccurrence' | 'usualArrival' | 'ledgerSeam'>,
  ) {
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.loop = opts.loop ?? new EventLoopShare();
    const ctx = {
      sources: opts.sources,
      logger: opts.logger,
      clock: opts.clock,
      schedules: new CronSchedules(),
      parts: new TransferParts(),
      ...(opts.displayTimezone !== undefined ? { displayTimezone: opts.displayTimezone } : {}),
      ...(opts.calendars ? { calendars: opts.calendars } : {}),
      ...(opts.onOccurrence ? { onOccurrence: opts.onOccurrence } : {}),
      ...(opts.usualArrival ? { usualArrival: opts.usualArrival } : {}),
      ...(opts.ledgerSeam ? { ledgerSeam: opts.ledgerSeam } : {}),
      ...(opts.onOccurrence || opts.keepHistory ? { keepEvidence: true } : {}),
    };
    this.entries = rules.map((rule) => {
      const evaluator = createEvaluator(rule, ctx);
      const sources = relevantSources(rule.match, opts.sources);
      const results = evaluator.onlyResult ? [evaluator.onlyResult] : (['success', 'error'] as const);
      const reads = { sources, results, key: `${results.join(',')}\u0000${sources.join('\u0000')}` };
      return { rule, evaluator, history: evaluator.historyNeeded(), last: undefined, lastAt: 0, lastUntil: 0, handedOn: undefined, reads };
    });
    const patternTests: SharedPatternTests = new Map();
    const matchers = new Map<string, TransferMatcher>();
    const indexOf = (result: 'success' | 'error'): RuleIndex<Selection> => {
      const selections = new Map<string, { match: MatchSpec; item: Selection }>();
      for (const entry of this.entries) {
        if ((entry.evaluator.onlyResult ?? result) !== result) continue;
        const key = selectionKey(entry.rule.match);
        const selection = selections.get(key);
        if (selection) {
          selection.item.entries.push(entry);
          continue;
        }
        let matches = matchers.get(key);
        if (!matches) matchers.set(key, (matches = compileMatch(entry.rule.match, patternTests)));
        selections.set(key, { match: entry.rule.match, item: { matches, entries: [entry] } });
      }
      return new RuleIndex([...selections.values()]);
    };
    this.index = { success: indexOf('success'), error: indexOf('error') };
    this.history = opts.keepHistory ? Infinity : Math.max(0, ...this.entries.map((e) => e.history));
    this.holdFrom = opts.holdFrom;
  }

  /** See the `holdFrom` option. */
  private readonly holdFrom: number | undefined;

  get rules(): readonly RuleDefinition[] {
    return this.entries.map((e) => e.rule);
  }

  /** Gives a transfer to the rules that match it; true when one of them keeps it (it can change an outcome). */
  observe(t: Transfer): boolean {
    // Older than every window: it cannot change any rule's outcome, and remembering it would grow memory.
    if (t.time <= this.clock.now() - this.history && (this.holdFrom === undefined || t.time < this.holdFrom)) return false;
    // The rules that match it first: most transfers match none (a success, for rules on failures), and for those
    // the id's lookup in a table of up to DEDUP_SPAN of ids was for nothing (2.4% of the 100-rule bench pipeline's
    // CPU profile; none now).
    const matched = this.matched;
    let n = 0;
    const lists = this.candidateLists;
    const count = this.index[t.result].candidates(t, lists);
    for (let l = 0; l < count; l++) {
      for (const selection of lists[l] as readonly Selection[]) {
        this.matchChecks++;
        if (selection.matches(t)) for (const entry of selection.entries) matched[n++] = entry;
      }
    }
    if (n === 0 || this.seen.has(t.id)) return false;
    let keepUntil: number | undefined;
    for (let i = 0; i < n; i++) {
      const entry = matched[i] as EngineEntry;
      entry.last = undefined;
      if (entry.evaluator.observe(t)) keepUntil = Math.max(keepUntil ?? -Infinity, t.time + Math.min(entry.history, DEDUP_SPAN));
    }
    if (keepUntil !== undefined && keepUntil > this.clock.now()) this.seen.add(t.id, keepUntil);
    return keepUntil !== undefined;
  }

  evaluate(now: number, data: DataCompleteness): RuleEvaluation[] {
    this.pruneSeen(now);
    const out: RuleEvaluation[] = [];
    const whole = new Map<string, boolean>();
    for (const entry of this.entries) this.evaluateEntry(entry, now, data, out, whole);
    return out;
  }

  /**
   * `evaluate`, with a turn of the event loop between two rules once a slice of a few ms is spent. The leader
   * evaluates a catch-up this way: a second of backfill made one evaluation of 100 rules a block of 50–100 ms,
   * and a scrape that came meanwhile waited for all of it. Transfers the leader reads during a turn reach the
   * rules not yet evaluated now and the others at the next evaluation, as they would have had they come later.
   */
  async evaluateInSlices(now: number, data: DataCompleteness): Promise<RuleEvaluation[]> {
    this.pruneSeen(now);
    const out: RuleEvaluation[] = [];
    // A rule evaluated is a sizeable piece of work: look at the clock after every one. A rule whose last evaluation
    // stands costs a few nanoseconds, and reading the clock after each of those was most of an evaluation of 1,000
    // rules that observed nothing.
    const slice = new TimeSlice(this.loop, 1);
    const whole = new Map<string, boolean>();
    let worked = false;
    for (const entry of this.entries) {
      if (worked && slice.spent()) await slice.yield();
      worked = this.evaluateEntry(entry, now, data, out, whole);
    }
    return out;
  }

  /** Adds the rule's evaluation to `out`; false when it was the last one, standing (nothing evaluated). */
  private evaluateEntry(entry: EngineEntry, now: number, data: DataCompleteness, out: RuleEvaluation[], whole: Map<string, boolean>): boolean {
    if (entry.last !== undefined && now >= entry.lastAt && now < entry.lastUntil) {
      out.push(entry.last);
      return false;
    }
    entry.last = undefined;
    try {
      let evaluation = entry.evaluator.evaluate(now, data);
      // A process that is still reading its way to the present (a restart, a new leader, a catch-up) has not read
      // the rule's window whole: what the rule does not report now is not known to have ended (contract section 11b).
      if (!evaluation.undecided && entry.reads.sources.length > 0 && !this.readWhole(entry.reads, data, whole)) evaluation = { ...evaluation, undecided: true };
      const before = entry.handedOn;
      if (before !== undefined && sameOutcome(before, evaluation)) evaluation = before;
      entry.handedOn = evaluation;
      out.push(evaluation);
      const until = entry.evaluator.unchangedUntil?.(now);
      // (An undecided one is asked again: the data may be whole at the next evaluation.)
      if (until !== undefined && until > now && !evaluation.undecided) {
        entry.last = evaluation;
        entry.lastAt = now;
        entry.lastUntil = until;
      }
    } catch (err) {
      // One broken rule must not silence the others; its alerts stay as they were (it is left out).
      this.logger.error({ rule: entry.rule.name, err: errorFields(err) }, 'rule evaluation failed');
    }
    return true;
  }

  /** Whether the sources and results of `reads` are read whole, asked once an evaluation for every rule that reads them. */
  private readWhole(reads: EngineEntry['reads'], data: DataCompleteness, whole: Map<string, boolean>): boolean {
    let known = whole.get(reads.key);
    if (known === undefined) whole.set(reads.key, (known = completeSpan(reads.sources, data, reads.results) !== undefined));
    return known;
  }

  private pruneSeen(now: number): void {
    if (now < this.nextPrune) return;
    this.seen.prune(now);
    this.nextPrune = now + PRUNE_EVERY;
  }

  historyNeeded(): number {
    return this.history;
  }

  /** The longest history a rule needs to decide (whatever this engine keeps): what a re-read of a span reads either side. */
  rulesReach(): number {
    return Math.max(0, ...this.entries.map((e) => e.history));
  }

  /** What deadline rules expect around `now` and how each stands; read-only (the status page shows it). */
  expectations(now: number, data: DataCompleteness): ExpectedFile[] {
    const out: ExpectedFile[] = [];
    for (const entry of this.entries) {
      try {
        out.push(...(entry.evaluator.expectations?.(now, data) ?? []));
      } catch (err) {
        this.logger.warn({ rule: entry.rule.name, err: errorFields(err) }, 'could not list the files a rule expects');
      }
    }
    return out;
  }

  /** The occurrences of every deadline rule in [from, to] (an SLA backfill: this engine was fed that history). */
  occurrencesBetween(from: number, to: number, span: ReadSpan): Array<{ rule: string; occurrences: Iterable<OccurrenceRecord> }> {
    const now = this.clock.now();
    return this.entries.flatMap((e) => (e.evaluator.occurrencesBetween ? [{ rule: e.rule.name, occurrences: e.evaluator.occurrencesBetween(from, to, span, now) }] : []));
  }

  /** Transfer ids currently remembered for deduplication (bounded by what the rules hold). */
  get rememberedTransfers(): number {
    return this.seen.size;
  }

  nextWakeup(now: number): number | undefined {
    let next: number | undefined;
    for (const entry of this.entries) {
      const t = entry.evaluator.nextWakeup(now);
      if (t !== undefined && t > now && (next === undefined || t < next)) next = t;
    }
    return next;
  }
}

/** The same candidates firing, resolved and cleared, in the same order. */
function sameOutcome(a: RuleEvaluation, b: RuleEvaluation): boolean {
  return a.undecided === b.undecided && sameItems(a.alerts, b.alerts) && sameItems(a.resolved ?? [], b.resolved ?? []) && sameItems(a.cleared ?? [], b.cleared ?? []);
}
