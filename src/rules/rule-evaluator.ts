import type { BusinessCalendar } from '../sla/business-calendar.js';
import type { OccurrenceRecord, ReadSpan } from '../sla/occurrence.js';
import type { RuleEvaluation } from '../alerts/alert-candidate.js';
import type { Transfer } from '../source/transfer.js';
import type { Clock } from '../util/clock.js';
import type { CronSchedules } from './cron-schedule.js';
import type { Logger } from '../util/logger.js';
import type { TransferParts } from './transfer-parts.js';

/** How far each source's stream has been read completely (the poller's cursors). */
export interface DataCompleteness {
  /** Epoch ms up to which that source's stream is fully read; undefined: never polled or unknown source. */
  completeUntil(source: string, result: 'success' | 'error'): number | undefined;
  /**
   * Optional: epoch ms from which that stream is read without gaps (e.g. the start of the history read at
   * start-up). A window that begins before it is not judged, so a first start with a short look-back does
   * not claim yesterday's file missing. Absent: data is taken as complete from the beginning of time.
   */
  completeFrom?(source: string, result: 'success' | 'error'): number | undefined;
}

/**
 * One rule's live state. The engine calls `observe` only with transfers the rule's `match` accepts, each
 * once. State must stay bounded: evaluators prune what time has moved past.
 */
export interface RuleEvaluator {
  /** Returns whether the rule kept the transfer (only then must the engine remember its id). */
  observe(t: Transfer): boolean;
  /**
   * Optional: the rule keeps only transfers of this result, so the engine need not run its matcher on the others
   * (error_burst looks at failures only: most traffic is successes).
   */
  readonly onlyResult?: 'success' | 'error';
  evaluate(now: number, data: DataCompleteness): RuleEvaluation;
  /** ms of history to re-read after a restart for this rule's windows to be whole again. */
  historyNeeded(): number;
  /** The earliest time after `now` at which the rule needs evaluating without new data (deadlines). */
  nextWakeup(now: number): number | undefined;
  /**
   * Optional: after `evaluate(now)`, the time until which that evaluation stands as it is for as long as the rule
   * observes nothing (the engine then hands it on again instead of asking); `now` or earlier when it may change
   * at once. Only for rules whose outcome does not depend on the data's completeness.
   */
  unchangedUntil?(now: number): number;
  /** Optional, read-only: the files this rule expects around `now` and how each stands (for the status page). */
  expectations?(now: number, data: DataCompleteness): ExpectedFile[];
  /**
   * Optional (deadline rules, the SLA backfill): every occurrence whose deadline is in [from, to], judged on the
   * transfers observed, which are complete over `span`. Nothing is pruned meanwhile: an evaluator built for a
   * backfill is fed history and asked once.
   */
  occurrencesBetween?(from: number, to: number, span: ReadSpan, now: number): Iterable<OccurrenceRecord>;
}

/**
 * One expected arrival of a deadline rule: `arrived` in its window, `late` (after the deadline), `missing`,
 * `not_due` (the deadline is ahead and it has not arrived yet), or `awaiting_data` (the deadline passed but the
 * source's data is not complete up to it, so nothing is claimed).
 */
export interface ExpectedFile {
  rule: string;
  /** The `for_each` label and value this expectation is for, if the rule has one. */
  key?: { label: string; value: string };
  /** The rule's `file` patterns, as a person-readable hint of what is expected. */
  files: string[];
  deadline: number;
  windowStart: number;
  timezone: string;
  status: 'arrived' | 'late' | 'missing' | 'in_jeopardy' | 'not_due' | 'awaiting_data';
  /** When the file that satisfied (or late-satisfied) the expectation arrived. */
  arrivedAt?: number;
  count: number;
  minCount: number;
  /**
   * `warn_before: auto`: when the warning comes (the key's usual arrival), or why there is none yet (too few judged
   * occurrences in the ledger).
   */
  learnedWarning?: { at: number; judged: number } | { why: string };
}

export type { UsualArrival } from '../sla/usual-arrivals.js';
import type { UsualArrival } from '../sla/usual-arrivals.js';

export interface EvaluatorContext {
  /** Names of the configured sources (for rules that must know whose data is complete). */
  sources: readonly string[];
  logger: Logger;
  clock: Clock;
  /** Optional: cron schedules shared by the rules of one engine (each run computed once); absent, each rule keeps its own. */
  schedules?: CronSchedules;
  /**
   * The zone people read times in (`display_timezone`): a rule without a `timezone` of its own shows its times
   * (window ends, first and last failures, arrivals) in it. Deadlines stay in the zone their cron is read in.
   */
  displayTimezone?: string;
  /** The config's named business calendars (`calendars:`), for rules that name one. */
  calendars?: ReadonlyMap<string, BusinessCalendar>;
  /** With a history: missing_file rules tell each occurrence of an expected file here when it changes (the SLA ledger). */
  onOccurrence?: (occurrence: OccurrenceRecord, how?: { seam: true }) => void;
  /**
   * The last deadline of a rule the ledger holds (where the process before this one stopped judging it): the
   * deadlines after it that came while nothing ran are judged once the history is read that far, and told with
   * `{ seam: true }` (not a live decision). Undefined: nothing to fill (a new rule: the backfill's).
   */
  ledgerSeam?: (rule: string) => number | undefined;
  /** A key's usual arrival (rule name, the occurrence's key text), for `warn_before: auto`; absent: it never warns. */
  usualArrival?: (rule: string, keyText: string) => UsualArrival | undefined;
  /** Keep the file and source of each arrival that can be evidence, for the ledger (a live ledger, or a backfill). */
  keepEvidence?: boolean;
  /** What the rules of one engine derive from a transfer (its sample, its group keys), derived once for all of them. */
  parts: TransferParts;
}

/** A rule whose optional display `timezone` is settled (see `withDisplayZone`). */
export type ZonedRule<R extends { timezone?: string | undefined }> = Omit<R, 'timezone'> & { timezone: string };

/**
 * The rule with the zone it shows its times in settled: its own `timezone` when it has one, else the reader's
 * (`display_timezone`), else UTC. Evaluators of display-only zones take this.
 */
export function withDisplayZone<R extends { timezone?: string | undefined }>(rule: R, ctx: EvaluatorContext): ZonedRule<R> {
  return { ...rule, timezone: rule.timezone ?? ctx.displayTimezone ?? 'UTC' };
}
