import { Cron } from 'croner';
import { z } from 'zod';
import type { AlertCandidate, RuleEvaluation } from '../alerts/alert-candidate.js';
import { formatDuration } from '../base/duration.js';
import { duration, timeZone } from '../base/schema-helpers.js';
import { transferLabel, type Transfer } from '../source/transfer.js';
import { AlertBuilder } from './alert-builder.js';
import { completeSpan, sourcesToJudge } from './complete-span.js';
import { CronSchedules, type CronSchedule } from './cron-schedule.js';
import { localDate, localDateFormatter } from './format-time.js';
import { formatTime } from '../util/format-time.js';
import type { DataCompleteness, EvaluatorContext, ExpectedFile, RuleEvaluator, UsualArrival } from './rule-evaluator.js';
import { labelNameSchema, ruleSchema } from './rule-schema.js';
import { BusinessCalendar, calendarSchema, unionCalendar, type LocalDay } from '../sla/business-calendar.js';
import { latenessText } from '../sla/lateness-text.js';
import { judgeOccurrence, keyText, occurrenceId, type OccurrenceRecord, type ReadSpan } from '../sla/occurrence.js';
import { indexAfter, timesIn } from '../util/sorted-numbers.js';
import { defineRuleType } from './rule-type.js';

const DAY = 86_400_000;

function cronProblem(pattern: string): string | undefined {
  try {
    new Cron(pattern, { paused: true });
    return undefined;
  } catch (err) {
    return `invalid cron expression: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * missing_file: at each `deadline` (cron in `timezone`), fewer than `min_count` successful matching transfers
 * arrived in (deadline − window, deadline]. Decided only once every relevant source's successes stream is read
 * up to the deadline, so an outage never looks like a missing file.
 */
export const missingFileSchema = ruleSchema('missing_file', {
  deadline: z.string().superRefine((p, ctx) => {
    const problem = cronProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  timezone: timeZone().default('UTC'),
  window: duration().refine((ms) => ms > 0, 'window must be greater than 0'),
  min_count: z.number().int().min(1).default(1),
  /**
   * Warn this long before the deadline while the file has not arrived (0: no warning), or `auto`: at the key's
   * usual arrival, learned from the ledger (contract section 13).
   */
  warn_before: z.union([z.literal('auto'), duration()]).prefault('0'),
  /** Annotation templates of the "in jeopardy" warning. */
  warn_annotations: z.record(z.string(), z.string()).default({}),
  /** Days without a deadline: the name of a calendar of the config's `calendars:`, or one written here. */
  calendar: z.union([z.string().min(1), calendarSchema]).prefault({}),
  /**
   * The service level owed (contract section 11): the share of occurrences on time per period (excused and
   * no_data ones left out), and until when a late file still counts as late (default: the next deadline).
   */
  sla: z
    .strictObject({
      objective: z.number().gt(0, 'objective is a share such as 0.99').max(1, 'objective is a share such as 0.99').default(0.99),
      period: z.enum(['month']).default('month'),
      late_until: duration()
        .refine((ms) => ms > 0, 'late_until must be greater than 0')
        .optional(),
    })
    .optional(),
  /** Expect the file once per value of a label (e.g. one statement per partner user). */
  for_each: z.strictObject({ label: labelNameSchema, values: z.array(z.string().min(1)).min(1) }).optional(),
});
export type MissingFileRule = z.output<typeof missingFileSchema>;

const TEMPLATE_VARIABLES = [
  'count',
  'min_count',
  'window',
  'window_ms',
  'window_start',
  'deadline',
  'deadline_ms',
  'timezone',
  'arrived_at',
  'arrived_at_ms',
  'lateness',
  'phase',
  'usual_arrival',
  'usual_basis',
];
const DEFAULT_ANNOTATIONS = {
  summary:
    '{{#if arrived_at}}{{alertname}}: file arrived late at {{arrived_at}} (deadline {{deadline}}, {{lateness}}){{else}}{{alertname}}: expected file not received by {{deadline}}{{/if}}',
  description: '{{count}} of {{min_count}} expected transfers arrived between {{window_start}} and {{deadline}}.',
};
const WARN_ANNOTATIONS = {
  summary: '{{alertname}}: expected file not received yet; deadline {{deadline}}',
  description: '{{count}} of {{min_count}} expected transfers so far since {{window_start}}; the deadline is {{deadline}}.',
};
/** `warn_before: auto`: the warning says what it was learned from. */
const LEARNED_WARN_ANNOTATIONS = {
  summary: '{{alertname}}: usually here by {{usual_arrival}} — {{usual_basis}}; not yet (deadline {{deadline}})',
  description: '{{count}} of {{min_count}} expected transfers so far since {{window_start}}; it usually arrives by {{usual_arrival}} ({{usual_basis}}); the deadline is {{deadline}}.',
};
/** `warn_before: auto` learns from at least this many judged occurrences (contract section 13). */
export const MIN_JUDGED_FOR_WARNING = 10;
/** A learned warning comes at least this long before the deadline. */
const MIN_LEARNED_LEAD_MS = 60_000;
/** Files after an occurrence's close kept as its evidence, at most. */
const AFTER_CLOSE_KEPT = 5;
/** How many deadlines ahead to look when estimating the longest gap between two (calendar exclusions widen it). */
const GAP_SAMPLE = 15;
const MAX_HISTORY = 35 * DAY;
/** Bound on deadline searches across long exclusion runs. */
const MAX_SKIPPED = 400;
/** Where windows overlap, at most this many deadlines before one are followed for the files they took (11c). */
const MAX_CHAIN = 64;
/** Deadlines whose chain (`chainBefore`) is kept: those an evaluation looks at, and a few more. */
const CHAINS_KEPT = 8;

/** What one candidate says, for one expected key: a candidate is rebuilt only when this changed. */
interface Finding {
  /** `jeopardy`: the warning before the deadline (warn_annotations, severity warning). */
  phase: 'missing' | 'jeopardy';
  deadline: number;
  count: number;
  /** A missing file that came after its deadline after all (the candidate then resolves the alert). */
  arrivedAt: number | undefined;
}

interface Built {
  finding: Finding;
  candidate: AlertCandidate;
}

/** No arrival for a key yet (shared, never modified). */
const NO_ARRIVALS: readonly number[] = [];

export class MissingFileEvaluator implements RuleEvaluator {
  private readonly schedule: CronSchedule;
  readonly onlyResult = 'success';
  private readonly builder: AlertBuilder;
  private readonly warnBuilder: AlertBuilder;
  /** Successful arrival times per expected key ('' without for_each), sorted. */
  private readonly arrivals = new Map<string, number[]>();
  private readonly keys: string[];
  private readonly sources: string[];
  private readonly calendar: { excludes(day: LocalDay): boolean; empty: boolean };
  private readonly dateFormatter: Intl.DateTimeFormat;
  /**
   * For the ledger: the file and source of each arrival, by key, at the same index as its time in `arrivals`
   * (parallel arrays: a Map of objects per arrival made the shipped-rules backfill grow by megabytes). '' for an
   * arrival that can be no occurrence's evidence (see `mayBeEvidence`): the file names of a window of a partner's
   * thousands of files were most of what the rule held.
   */
  private readonly evidence = new Map<string, { files: string[]; sources: string[] }>();
  /** What was last recorded of each occurrence in view (by id), so an unchanged one is not recorded again. */
  private readonly recorded = new Map<string, string>();
  private readonly history: number;
  /** The last two deadlines and the next one, valid while `now` stays in [latest, next): evaluation runs every cycle. */
  private deadlineCache: { latest: number; before: number | undefined; next: number | undefined } | undefined;
  /**
   * The last candidate built per phase and expected key, with what it was built from (a map per phase, and the
   * finding compared field by field: a key and a signature made as strings were most of what an evaluation of a
   * missing file allocated, evaluation after evaluation).
   */
  private readonly built = { missing: new Map<string, Built>(), jeopardy: new Map<string, Built>() };
  /** Bumped whenever `arrivals` changes (an arrival observed, old ones pruned): a `last` of another version is stale. */
  private arrivalsVersion = 0;
  /** The latest arrival time ever observed: while it is not after a `last` evaluation's time, `now` moving on changes no count. */
  private latestArrival = -Infinity;
  /**
   * The last evaluation's alerts and what they were decided from (see `evaluate`). A missing file stays missing for
   * hours and a rule that expects nothing soon has nothing to say; both were worked out again at every evaluation
   * (each page of a catch-up): with 250 such rules of 1,000, a fifth of the bench pipeline's evaluations.
   */
  /**
   * The deadline each key's "in jeopardy" warning was last raised for: when the warning is no longer due, its
   * resolved message says how it ended (the file came in time, or the deadline passed and it is missing) instead of
   * repeating "not received yet".
   */
  private warned = new Map<string, number>();
  /** The last few deadlines' chains (`chainBefore`), oldest first. */
  private readonly chains = new Map<number, readonly number[]>();
  /** The deadline whose warning's last words were last given per key (by this process, or for its predecessor's). */
  private readonly warningEnded = new Map<string, number>();
  /**
   * The last deadline the ledger judged before this process (ctx.ledgerSeam): those after it and before the two in
   * view came while nothing ran, and are judged once the history is read that far; undefined once none is left.
   */
  private seam: number | undefined;
  /** Per key, the latest deadline whose late file this process told as the end of its episode. */
  private readonly endedLate = new Map<string, number>();
  private last: { at: number; version: number; decided: number | undefined; warnLatest: number | undefined; warnNext: number | undefined; evaluation: RuleEvaluation } | undefined;

  constructor(
    private readonly rule: MissingFileRule,
    private readonly ctx: EvaluatorContext,
  ) {
    this.schedule = (ctx.schedules ?? new CronSchedules()).get(rule.deadline, rule.timezone);
    this.builder = new AlertBuilder(rule, DEFAULT_ANNOTATIONS);
    // The warning points to the rule's runbook unless its own annotations name another: the person woken by
    // the warning needs it as much as the one woken by the alert.
    const runbook = rule.annotations['runbook_url'];
    this.warnBuilder = new AlertBuilder(rule, rule.warn_before === 'auto' ? LEARNED_WARN_ANNOTATIONS : WARN_ANNOTATIONS, {
      ...(runbook !== undefined ? { runbook_url: runbook } : {}),
      ...rule.warn_annotations,
    });
    this.keys = rule.for_each ? [...new Set(rule.for_each.values)] : [''];
    this.sources = sourcesToJudge(rule, ctx);
    this.calendar = resolveCalendar(rule, ctx);
    this.dateFormatter = localDateFormatter(rule.timezone);
    this.history = this.computeHistory(ctx.clock.now());
    this.seam = ctx.onOccurrence ? ctx.ledgerSeam?.(rule.name) : undefined;
  }

  /**
   * How long before a deadline the key's warning comes (0: none): `warn_before`, or with `auto` the key's usual
   * arrival (the p95 of its last judged occurrences, from at least MIN_JUDGED_FOR_WARNING), never later than a
   * minute before the deadline.
   */
  private lead(key: string): number {
    const w = this.rule.warn_before;
    if (w !== 'auto') return w;
    const usual = this.usual(key);
    if (!usual || usual.judged < MIN_JUDGED_FOR_WARNING) return 0;
    return Math.max(MIN_LEARNED_LEAD_MS, -usual.p95OffsetMs);
  }

  private usual(key: string): UsualArrival | undefined {
    const labels = this.rule.for_each ? { [this.rule.for_each.label]: key } : {};
    return this.ctx.usualArrival?.(this.rule.name, keyText(labels));
  }

  /** The earliest warning of any key (the rule may have a warning due from then on). */
  private maxLead(): number {
    if (this.rule.warn_before !== 'auto') return this.rule.warn_before;
    let max = 0;
    for (const key of this.keys) max = Math.max(max, this.lead(key));
    return max;
  }

  /** What `/api/v1/alerts` and the page say of a learned warning: when it comes, or why it does not. */
  private learnedWarning(key: string, deadline: number): ExpectedFile['learnedWarning'] | undefined {
    if (this.rule.warn_before !== 'auto') return undefined;
    const usual = this.usual(key);
    const judged = usual?.judged ?? 0;
    if (!usual || judged < MIN_JUDGED_FOR_WARNING) return { why: `no learned warning yet: ${judged} judged occurrences in the ledger, ${MIN_JUDGED_FOR_WARNING} needed` };
    return { at: deadline - this.lead(key), judged };
  }

  private isExcluded(deadline: number): boolean {
    if (this.calendar.empty) return false;
    return this.calendar.excludes(localDate(deadline, this.rule.timezone, this.dateFormatter));
  }

  /** Up to `n` deadlines at or before `now`, newest first, skipping excluded days. */
  private previousDeadlines(now: number, n: number): number[] {
    const out: number[] = [];
    let at = now;
    for (let i = 0; i < MAX_SKIPPED && out.length < n; i++) {
      const prev = this.schedule.atOrBefore(at);
      if (prev === undefined) break;
      if (!this.isExcluded(prev)) out.push(prev);
      at = prev - 1;
    }
    return out;
  }

  /** The first deadline after `now`, skipping excluded days. */
  private nextDeadline(now: number): number | undefined {
    let from = now;
    for (let i = 0; i < MAX_SKIPPED; i++) {
      const next = this.schedule.after(from);
      if (next === undefined) return undefined;
      if (!this.isExcluded(next)) return next;
      from = next;
    }
    return undefined;
  }

  private deadlinesAround(now: number): { latest: number | undefined; before: number | undefined; next: number | undefined } {
    const c = this.deadlineCache;
    if (c && now >= c.latest && (c.next === undefined || now < c.next)) return c;
    const [latest, before] = this.previousDeadlines(now, 2);
    const next = this.nextDeadline(now);
    this.deadlineCache = latest === undefined ? undefined : { latest, before, next };
    return { latest, before, next };
  }

  private computeHistory(now: number): number {
    let maxGap = 0;
    let minGap = Infinity;
    let prev = this.previousDeadlines(now, 1)[0];
    let at = now;
    for (let i = 0; i < GAP_SAMPLE; i++) {
      const next = this.nextDeadline(at);
      if (next === undefined) break;
      if (prev !== undefined) {
        maxGap = Math.max(maxGap, next - prev);
        minGap = Math.min(minGap, next - prev);
      }
      prev = next;
      at = next;
    }
    // The older of the two last deadlines must be decidable again after a restart: window + two gaps (and, where
    // windows overlap, one window more: what the deadlines before took decides what is left, see `available`).
    return Math.min(MAX_HISTORY, (this.rule.window > minGap ? 2 : 1) * this.rule.window + 2 * maxGap);
  }

  observe(t: Transfer): boolean {
    if (t.result !== 'success') return false;
    const key = this.rule.for_each ? transferLabel(t, this.rule.for_each.label) : '';
    if (!this.keys.includes(key)) return false;
    let list = this.arrivals.get(key);
    if (!list) this.arrivals.set(key, (list = []));
    let i = list.length;
    while (i > 0 && (list[i - 1] as number) > t.time) i--;
    list.splice(i, 0, t.time);
    this.arrivalsVersion++;
    if (t.time > this.latestArrival) this.latestArrival = t.time;
    if (this.ctx.keepEvidence) {
      let e = this.evidence.get(key);
      if (!e) this.evidence.set(key, (e = { files: [], sources: [] }));
      const kept = this.mayBeEvidence(list, i);
      e.files.splice(i, 0, kept ? t.file : '');
      e.sources.splice(i, 0, kept ? t.source : '');
    }
    return true;
  }

  /**
   * Whether the file and source of the arrival at `i` of `list` (sorted times) are worth keeping: it can be evidence
   * of an occurrence (among the first `min_count` arrivals of a deadline's window, or after that deadline), or one
   * of the first AFTER_CLOSE_KEPT files after an occurrence's close that no occurrence took (contract 11c: each
   * `after_close` entry names its file and source). The deadline looked at is the latest whose window began before
   * this arrival; the schedule's runs are taken with the excluded days (a later start than the latest real
   * deadline's: more kept, never fewer). Where windows overlap, every name is kept: which deadline takes an arrival
   * depends on what the deadlines before took. Arrivals seen later can only come before this one, or after it: one
   * not kept now is never evidence; one kept may stop being evidence, and costs its name until it is pruned.
   */
  private mayBeEvidence(list: readonly number[], i: number): boolean {
    const time = list[i] as number;
    const deadline = this.schedule.atOrBefore(time + this.rule.window - 1);
    if (deadline === undefined) return true;
    const before = this.schedule.atOrBefore(deadline - 1);
    if (before !== undefined && deadline - this.rule.window < before) return true;
    // In the deadline's window: its evidence, then the previous occurrence's after_close; after it: its late
    // evidence, then its own after_close.
    const from = time > deadline ? deadline : deadline - this.rule.window;
    return i - indexAfter(list, from) < this.rule.min_count + AFTER_CLOSE_KEPT;
  }

  /**
   * The arrivals of `key` that the occurrence of deadline `d` can take (contract 11c: one file, one occurrence). All of
   * them where its window does not reach back to the deadline before it (the default: spans never overlap). Where
   * windows overlap, the open occurrences take files in arrival order, in deadline order: the deadlines before `d`
   * whose windows began at most one window before `d`'s take theirs first (each its first `min_count` not yet taken
   * in its span), and `d` has what is left. `index` maps the result back to `list` (for the files' names).
   */
  private available(list: readonly number[], d: number): { times: readonly number[]; index?: number[] } {
    const window = this.rule.window;
    const chain = this.chainBefore(d);
    if (chain.length === 0 || list.length === 0) return { times: list };
    const taken = new Uint8Array(list.length);
    for (let j = 0; j < chain.length; j++) {
      const p = chain[j] as number;
      const close = this.closesAt(p, chain[j + 1] ?? d) ?? d;
      let n = 0;
      for (let i = indexAfter(list, p - window); i < list.length && (list[i] as number) <= close && n < this.rule.min_count; i++) {
        if (taken[i] === 0) {
          taken[i] = 1;
          n++;
        }
      }
    }
    const times: number[] = [];
    const index: number[] = [];
    for (let i = 0; i < list.length; i++) {
      if (taken[i] === 0) {
        times.push(list[i] as number);
        index.push(i);
      }
    }
    return { times, index };
  }

  /**
   * The deadlines before `d` that take files before it where windows overlap (see `available`), oldest first; none
   * where `d`'s window does not reach back to the deadline before it (the default). The same for every key, and asked
   * for each key at every evaluation: the last few are kept.
   */
  private chainBefore(d: number): readonly number[] {
    const cached = this.chains.get(d);
    if (cached) return cached;
    const window = this.rule.window;
    const chain: number[] = [];
    for (let p = this.previousDeadlines(d - 1, 1)[0]; p !== undefined && p > d - window && chain.length < MAX_CHAIN; p = this.previousDeadlines(p - 1, 1)[0]) {
      chain.unshift(p);
    }
    if (chain.length > 0) {
      // Deadlines before the first one whose window reaches d's: they may have taken files of the chain's first.
      for (let p = this.previousDeadlines((chain[0] as number) - 1, 1)[0]; p !== undefined && p > d - 2 * window && chain.length < MAX_CHAIN; p = this.previousDeadlines(p - 1, 1)[0]) {
        chain.unshift(p);
      }
    }
    if (this.chains.size >= CHAINS_KEPT) this.chains.delete(this.chains.keys().next().value as number);
    this.chains.set(d, chain);
    return chain;
  }

  evaluate(now: number, data: DataCompleteness): RuleEvaluation {
    const span = completeSpan(this.sources, data, ['success']);
    const { latest, before, next } = this.deadlinesAround(now);
    const latestDecided = this.decidable(latest, span);
    const decided = latestDecided ? latest : this.decidable(before, span) ? before : undefined;
    const oldest = before ?? latest ?? now - this.history;
    // Arrivals the seam still needs are kept until it is filled.
    const seamFirst = this.seam !== undefined ? this.nextDeadline(this.seam) : undefined;
    this.prune(seamFirst !== undefined ? Math.min(oldest, seamFirst) : oldest);
    // The deadlines a warning looks at: the latest one while it is not decided yet, and the one ahead; each only
    // once its warning time has come and the data are read that far.
    const warnLatest = latest !== undefined && !latestDecided && this.warningDue(latest, now, span) ? latest : undefined;
    const warnNext = next !== undefined && this.warningDue(next, now, span) ? next : undefined;
    // The alerts are decided by the arrivals, the deadline decided and the warnings due, and by `now` only
    // through which arrivals are at or before it: with all of these as they were, they are the last evaluation's
    // (the same object, which the alert store then passes over).
    const last = this.last;
    let evaluation: RuleEvaluation;
    if (
      last !== undefined &&
      last.version === this.arrivalsVersion &&
      last.decided === decided &&
      last.warnLatest === warnLatest &&
      last.warnNext === warnNext &&
      now >= last.at &&
      this.latestArrival <= last.at
    ) {
      evaluation = last.evaluation;
    } else {
      evaluation = this.decide(now, decided, decided === undefined ? undefined : this.closesAt(decided, decided === latest ? next : latest), decided === latest ? before : undefined, warnLatest, warnNext);
      // An evaluation that told an earlier episode's end first (undecided, see `lateEndOf`) is never the last word:
      // the next one says the rest.
      this.last = evaluation.undecided ? undefined : { at: now, version: this.arrivalsVersion, decided, warnLatest, warnNext, evaluation };
    }
    if (this.ctx.onOccurrence) this.recordOccurrences(now, span, before, latest, next);
    // A deadline has come but none can be judged (its window not read whole: a new process reading its way to the
    // present): its alert, firing before, stays as it is (contract section 11b).
    if (decided === undefined && latest !== undefined && !evaluation.undecided) return { ...evaluation, undecided: true };
    return evaluation;
  }

  /** Whether the warning before deadline `d` is due at `now`: its time has come, and the data are read that far and cover its window. */
  private warningDue(d: number, now: number, span: ReadSpan | undefined): boolean {
    const lead = this.maxLead();
    if (lead <= 0) return false;
    const warnAt = d - lead;
    return now >= warnAt && span !== undefined && span.until >= warnAt && this.covers(span, d);
  }

  /** The alerts of an evaluation: the decided deadline's missing files, and the due warnings' files not there yet. */
  private decide(now: number, decided: number | undefined, closes: number | undefined, previous: number | undefined, warnLatest: number | undefined, warnNext: number | undefined): RuleEvaluation {
    const alerts: AlertCandidate[] = [];
    const resolved: AlertCandidate[] = [];
    // An earlier episode's end told before this deadline's alert: the alerts left unsaid (this deadline's, an episode
    // begun since) stay as they are until the next evaluation.
    let deferred = false;
    const warnDeadlines = [warnLatest, warnNext];
    for (const key of this.keys) {
      const all = this.arrivals.get(key) ?? NO_ARRIVALS;
      const list = decided !== undefined ? this.available(all, decided).times : all;
      if (decided !== undefined) {
        const count = timesIn(list, decided - this.rule.window, decided);
        if (count < this.rule.min_count) {
          // A file after the deadline is its late file only until the occurrence closes (contract 11c): one after
          // the close is the next occurrence's, and leaves this alert to the next deadline's verdict.
          const late = lateFileOf(list, decided, closes, now);
          const candidate = this.build(key, { phase: 'missing', deadline: decided, count, arrivedAt: late });
          const endedBefore = late === undefined && previous !== undefined ? this.lateEndOf(key, all, previous, decided, now) : undefined;
          if (late !== undefined) {
            resolved.push(candidate);
            this.endedLate.set(key, decided);
          } else if (endedBefore !== undefined) {
            // The previous deadline's late file came while no process of ours saw it (a stop): that episode ends
            // first, with its words, and this deadline's opens at the next evaluation — as a process that never
            // stopped told them, not one episode "late" for this deadline (contract 11b).
            resolved.push(endedBefore);
            this.endedLate.set(key, previous as number);
            deferred = true;
          } else alerts.push(candidate);
        } else if (previous !== undefined && timesIn(this.available(all, previous).times, previous - this.rule.window, previous) < this.rule.min_count) {
          // On time, after a deadline that was missed: that one's alert (if it still fires) ends here, and says why —
          // the next file came, for its own deadline (one file, one deadline: contract 11c).
          const arrived = list[indexAfter(list, decided - this.rule.window) + this.rule.min_count - 1] as number;
          resolved.push(this.closedByNext(key, previous, decided, arrived, this.available(all, previous).times));
        }
      }
      let warning: number | undefined;
      for (const d of warnDeadlines) {
        if (d === undefined) continue;
        // Learned warnings come per key: one key's usual arrival may be hours before another's.
        const lead = this.lead(key);
        if (lead <= 0 || now < d - lead) continue;
        const count = timesIn(this.available(all, d).times, d - this.rule.window, now);
        if (count < this.rule.min_count) {
          alerts.push(this.build(key, { phase: 'jeopardy', deadline: d, count, arrivedAt: undefined }));
          warning = d;
          break;
        }
      }
      const warnedFor = this.warned.get(key);
      if (warning !== undefined) this.warned.set(key, warning);
      else if (warnedFor !== undefined) {
        this.warned.delete(key);
        this.warningEnded.set(key, warnedFor);
        resolved.push(this.jeopardyEnded(key, warnedFor, this.available(all, warnedFor).times, now));
      } else if (decided !== undefined && this.warningEnded.get(key) !== decided && this.lead(key) > 0 && now >= decided - this.lead(key)) {
        // A warning this process never raised may have been raised by the one before it (a restart, a new leader):
        // its last words for the deadline just decided, once, taken only by a warning that is still open.
        this.warningEnded.set(key, decided);
        resolved.push(this.jeopardyEnded(key, decided, this.available(all, decided).times, now));
      }
    }
    return { rule: this.rule.name, alerts, resolved, ...(deferred ? { undecided: true } : {}) };
  }

  /**
   * The end of a key's episode at deadline `previous` by its late file, when this process has not told it (it came
   * during a stop, and the first evaluation after it is already past the next deadline `decided`): the resolved
   * candidate, ending only an alert active before that file; undefined when `previous` was on time, its file never
   * came before its close, or this process told its end already.
   */
  private lateEndOf(key: string, all: readonly number[], previous: number, decided: number, now: number): AlertCandidate | undefined {
    if (this.endedLate.get(key) === previous) return undefined;
    const list = this.available(all, previous).times;
    const count = timesIn(list, previous - this.rule.window, previous);
    if (count >= this.rule.min_count) return undefined;
    const late = lateFileOf(list, previous, this.closesAt(previous, decided), now);
    if (late === undefined) return undefined;
    return { ...this.build(key, { phase: 'missing', deadline: previous, count, arrivedAt: late }), endsEpisodeBefore: late };
  }

  /**
   * The last words of a missing file's alert for deadline `missed` whose file never came, ended by the next deadline's
   * file, on time for its own deadline `next` (at `arrived`): the resolved message says so in every channel.
   */
  private closedByNext(key: string, missed: number, next: number, arrived: number, list: readonly number[]): AlertCandidate {
    const count = timesIn(list, missed - this.rule.window, missed);
    const candidate = this.render(this.groupLabels(key), { phase: 'missing', deadline: missed, count, arrivedAt: undefined }, key);
    const shown = this.ctx.displayTimezone ?? this.rule.timezone;
    const resolution = `the next file arrived at ${formatTime(arrived, shown)}, on time for the deadline ${formatTime(next, this.rule.timezone)}; the deadline ${formatTime(missed, this.rule.timezone)} stays missing`;
    return { ...candidate, annotations: { ...candidate.annotations, resolution } };
  }

  /**
   * The last words of a key's "in jeopardy" warning for deadline `d`, which is no longer due: the file came before
   * the deadline, or the deadline passed without it (the missing alert, or its late arrival, takes the story on).
   * Its summary and description say so in every channel, whatever the rule's warn_annotations say of the warning.
   */
  private jeopardyEnded(key: string, d: number, list: readonly number[], now: number): AlertCandidate {
    const from = d - this.rule.window;
    const count = timesIn(list, from, Math.min(now, d));
    const candidate = this.render(this.groupLabels(key), { phase: 'jeopardy', deadline: d, count, arrivedAt: undefined }, key);
    const shown = this.ctx.displayTimezone ?? this.rule.timezone;
    const deadline = formatTime(d, this.rule.timezone);
    let ending: string;
    if (count >= this.rule.min_count) {
      const arrived = list[indexAfter(list, from) + this.rule.min_count - 1] as number;
      ending = `no longer in jeopardy: the file arrived at ${formatTime(arrived, shown)}, before its deadline ${deadline}`;
    } else {
      ending = `the deadline ${deadline} passed without the file: it is reported missing`;
    }
    const annotations = {
      ...candidate.annotations,
      summary: `${this.rule.name}: ${ending}`,
      description: `${count} of ${this.rule.min_count} expected transfers arrived by the deadline ${deadline}.`,
      resolution: ending,
    };
    return { ...candidate, annotations };
  }

  /**
   * The ledger (contract section 11): the occurrences of the last two deadlines, as far as they can be judged,
   * told to the history when they change (a missing file that arrives late becomes late at the next poll).
   * Older occurrences were told when they were in view; a first start or a long outage is filled by the backfill.
   */
  private recordOccurrences(now: number, span: ReadSpan | undefined, before: number | undefined, latest: number | undefined, next: number | undefined): void {
    const sink = this.ctx.onOccurrence;
    if (!sink) return;
    const deadlines = [before, latest].filter((d): d is number => d !== undefined);
    if (this.seam !== undefined) this.fillSeam(now, span, deadlines[0]);
    const live = new Set<string>();
    for (const deadline of deadlines) {
      const closesAt = this.closesAt(deadline, deadline === latest ? next : latest);
      if (closesAt === undefined) continue;
      for (const key of this.keys) {
        const record = this.occurrence(deadline, key, closesAt, span, now, deadline === latest ? next : latest);
        live.add(occurrenceId(this.rule.name, key, deadline));
        if (!record) continue;
        const signature = `${record.outcome}/${record.final}/${record.arrived_at ?? ''}/${record.count}/${record.after_close.length}`;
        if (this.recorded.get(record.id) === signature) continue;
        this.recorded.set(record.id, signature);
        sink(record);
      }
    }
    for (const id of this.recorded.keys()) if (!live.has(id)) this.recorded.delete(id);
  }

  /**
   * The deadlines after the seam and before `inView` (the older of the two the live rule records): each judged for
   * every key once the history is read past its close, told as a seam's (not a live decision), in order. A deadline
   * whose window began before the history this process read (a stop longer than its re-read) cannot be judged: it
   * is passed over and said in the log, never written no_data.
   */
  private fillSeam(now: number, span: ReadSpan | undefined, inView: number | undefined): void {
    const sink = this.ctx.onOccurrence;
    if (!sink || this.seam === undefined) return;
    let d = this.nextDeadline(this.seam);
    const unreadable: number[] = [];
    while (d !== undefined && inView !== undefined && d < inView) {
      const following = this.nextDeadline(d);
      const closesAt = this.closesAt(d, following);
      if (closesAt !== undefined) {
        if (span !== undefined && span.from > d - this.rule.window) {
          unreadable.push(d);
        } else {
          const records = this.keys.map((key) => this.occurrence(d as number, key, closesAt, span, now, following));
          // Not read past its close yet (a catch-up, a source that does not answer): judged at a later evaluation, in
          // order — never no_data for a history that is only not read yet.
          if (records.some((r) => r === undefined || !r.final)) break;
          for (const r of records) if (r) sink(r, { seam: true });
        }
      }
      this.seam = d;
      d = following;
    }
    if (unreadable.length > 0) {
      this.ctx.logger.warn(
        { rule: this.rule.name, deadlines: unreadable.length, first: new Date(unreadable[0] as number).toISOString(), last: new Date(unreadable[unreadable.length - 1] as number).toISOString() },
        'deadlines that came while nothing ran are older than the history this start re-read: not judged (transfer-watch sla rejudge can judge them from the service history)',
      );
    }
    if (d === undefined || inView === undefined || d >= inView) this.seam = undefined;
  }

  /**
   * When a late file stops counting (contract 11c): the start of the key's next occurrence's window, or deadline +
   * sla.late_until when that is sooner. So the spans of one key do not overlap, and the next period's file is never
   * late evidence for this one. (Where the windows themselves overlap — a window longer than the gap between two
   * deadlines — the next deadline, as before.)
   */
  private closesAt(deadline: number, following: number | undefined): number | undefined {
    const lateUntil = this.rule.sla?.late_until;
    const closes = Math.min(following === undefined ? Infinity : lateLimit(deadline, following, this.rule.window), lateUntil !== undefined ? deadline + lateUntil : Infinity);
    return Number.isFinite(closes) ? closes : undefined;
  }

  private occurrence(
    deadline: number,
    key: string,
    closesAt: number,
    span: ReadSpan | undefined,
    now: number,
    following: number | undefined,
  ): OccurrenceRecord | undefined {
    const all = this.arrivals.get(key) ?? NO_ARRIVALS;
    const { times, index } = this.available(all, deadline);
    const judged = judgeOccurrence({ deadline, window: this.rule.window, minCount: this.rule.min_count, closesAt, times, span, now });
    if (!judged) return undefined;
    const e = this.evidence.get(key);
    const entry = (i: number) => {
      const at = index ? (index[i] as number) : i;
      return { file: e?.files[at] ?? '', at: times[i] as number, source: e?.sources[at] ?? '' };
    };
    const files: OccurrenceRecord['files'] = [];
    for (let i = judged.evidence.from; i < judged.evidence.to; i++) files.push(entry(i));
    // The files after the close, until the next deadline (as far as the history is read): evidence, no outcome.
    const afterClose: OccurrenceRecord['after_close'] = [];
    const seenUntil = Math.min(now, span?.until ?? -Infinity, following ?? Infinity);
    if (seenUntil > closesAt) {
      // Not the files the next occurrence takes as its evidence (the first min_count of its window, contract 11c).
      const nextFrom = following === undefined ? times.length : indexAfter(times, following - this.rule.window);
      const nextTo = nextFrom + this.rule.min_count;
      for (let i = indexAfter(times, closesAt); i < times.length && (times[i] as number) <= seenUntil && afterClose.length < AFTER_CLOSE_KEPT; i++) {
        if (i >= nextFrom && i < nextTo) continue;
        afterClose.push(entry(i));
      }
    }
    const keyLabels = this.rule.for_each ? { [this.rule.for_each.label]: key } : {};
    return {
      kind: 'occurrence',
      id: occurrenceId(this.rule.name, key, deadline),
      at: deadline,
      rule: this.rule.name,
      key: keyLabels,
      key_text: keyText(keyLabels),
      local_date: localDate(deadline, this.rule.timezone, this.dateFormatter).date,
      deadline,
      timezone: this.rule.timezone,
      outcome: judged.outcome,
      final: judged.final,
      arrived_at: judged.arrivedAt,
      lateness_seconds: judged.outcome === 'late' && judged.arrivedAt !== null ? Math.round((judged.arrivedAt - deadline) / 1000) : null,
      count: judged.count,
      min_count: this.rule.min_count,
      files,
      after_close: afterClose,
      closes_at: closesAt,
    };
  }

  *occurrencesBetween(from: number, to: number, span: ReadSpan, now: number): Generator<OccurrenceRecord> {
    // A generator: the backfill takes them a batch at a time and gives the event loop a turn between batches (a
    // month of a rule with many keys is 100,000 occurrences and more, judged here in one go it held the loop).
    let deadline = this.nextDeadline(from - 1);
    while (deadline !== undefined && deadline <= to) {
      const following = this.nextDeadline(deadline);
      const closesAt = this.closesAt(deadline, following);
      if (closesAt !== undefined) {
        for (const key of this.keys) {
          const record = this.occurrence(deadline, key, closesAt, span, now, following);
          if (record) yield record;
        }
      }
      deadline = following;
    }
  }

  /**
   * The candidate for one expected key, rebuilt only when what it says changed: a missing file stays missing
   * for hours and is evaluated every few seconds, and rendering its templates was most of the rule's cost.
   * (Candidates are never modified after they are built.)
   */
  private build(key: string, finding: Finding): AlertCandidate {
    const built = this.built[finding.phase];
    const last = built.get(key);
    if (last && last.finding.deadline === finding.deadline && last.finding.count === finding.count && last.finding.arrivedAt === finding.arrivedAt) {
      return last.candidate;
    }
    const candidate = this.render(this.groupLabels(key), finding, key);
    built.set(key, { finding, candidate });
    return candidate;
  }

  /** The labels of an expected key's alert: its `for_each` label, and the source when the rule reads only one. */
  private groupLabels(key: string): Record<string, string> {
    const labels: Record<string, string> = {};
    if (this.rule.for_each) labels[this.rule.for_each.label] = key;
    if (this.sources.length === 1) labels['source'] = this.sources[0] as string;
    return labels;
  }

  /** Whether the deadline `d` is decided: the data are complete up to it and cover its window. */
  private decidable(d: number | undefined, span: ReadSpan | undefined): d is number {
    return d !== undefined && span !== undefined && span.until >= d && this.covers(span, d);
  }

  /** Whether the data complete from `span.from` cover the window of the deadline `d`. */
  private covers(span: { from: number } | undefined, d: number): boolean {
    return span !== undefined && span.from <= d - this.rule.window;
  }

  private render(groupLabels: Record<string, string>, { phase, deadline, count, arrivedAt }: Finding, key: string): AlertCandidate {
    const builder = phase === 'jeopardy' ? this.warnBuilder : this.builder;
    // The deadline is read in the rule's zone (its cron's); every other instant in the reader's zone.
    const tz = this.rule.timezone;
    const shown = this.ctx.displayTimezone ?? tz;
    const values: Record<string, number | string> = {
      count,
      min_count: this.rule.min_count,
      window_ms: this.rule.window,
      window: formatDuration(this.rule.window),
      deadline_ms: deadline,
      deadline: formatTime(deadline, tz),
      timezone: tz,
      phase: arrivedAt !== undefined ? 'late' : phase,
    };
    if (arrivedAt !== undefined) {
      values['arrived_at_ms'] = arrivedAt;
      values['arrived_at'] = formatTime(arrivedAt, shown);
      values['lateness'] = latenessText((arrivedAt - deadline) / 1000);
    }
    if (phase === 'jeopardy' && this.rule.warn_before === 'auto') {
      const usual = this.usual(key);
      values['usual_arrival'] = formatTime(deadline - this.lead(key), shown);
      const days = this.calendar.empty ? 'occurrences' : 'business days';
      values['usual_basis'] = `95 % of the last ${usual?.judged ?? 0} ${days}`;
    }
    const candidate = builder.build({
      groupLabels,
      values,
      display: { window_start: formatTime(deadline - this.rule.window, shown) },
      ...(phase === 'jeopardy' ? { extraLabels: { phase: 'jeopardy' }, severity: 'warning' } : {}),
    });
    if (arrivedAt !== undefined) {
      // Whatever the rule's own templates say, a late arrival is always spelled out with its time and zone.
      candidate.annotations['resolution'] = `arrived late at ${values['arrived_at']} (deadline ${values['deadline']}, ${values['lateness']})`;
    }
    return candidate;
  }

  private prune(oldestDeadline: number): void {
    // Where windows overlap, what the deadlines before took decides what the oldest kept one has (`available`).
    const overlapping = this.chainBefore(oldestDeadline).length > 0;
    const keepAfter = oldestDeadline - (overlapping ? 2 : 1) * this.rule.window;
    for (const [key, list] of this.arrivals) {
      const drop = indexAfter(list, keepAfter);
      if (drop > 0) {
        this.arrivalsVersion++;
        const e = this.evidence.get(key);
        e?.files.splice(0, drop);
        e?.sources.splice(0, drop);
        list.splice(0, drop);
      }
      if (list.length === 0) {
        this.arrivals.delete(key);
        this.evidence.delete(key);
      }
    }
  }

  historyNeeded(): number {
    return this.history;
  }

  /**
   * Read-only view for people: the last two deadlines and the next one that fall on today's date in the rule's
   * zone (or the next deadline alone when none is today), per expected key. Only the last two deadlines are
   * shown because arrivals before them are pruned; the states follow `evaluate`'s rules (never "missing"
   * while the data is incomplete).
   */
  expectations(now: number, data: DataCompleteness): ExpectedFile[] {
    const span = completeSpan(this.sources, data, ['success']);
    const { latest, before, next } = this.deadlinesAround(now);
    const today = localDate(now, this.rule.timezone, this.dateFormatter).date;
    const onToday = (d: number | undefined): d is number => d !== undefined && localDate(d, this.rule.timezone, this.dateFormatter).date === today;
    let deadlines = [before, latest, next].filter(onToday);
    if (deadlines.length === 0 && next !== undefined) deadlines = [next];
    const out: ExpectedFile[] = [];
    for (const deadline of deadlines) {
      const windowStart = deadline - this.rule.window;
      const decidable = span !== undefined && span.until >= deadline && span.from <= windowStart;
      const closes = this.closesAt(deadline, this.nextDeadline(deadline)) ?? Infinity;
      for (const key of this.keys) {
        const list = this.available(this.arrivals.get(key) ?? NO_ARRIVALS, deadline).times;
        const first = indexAfter(list, windowStart);
        const count = Math.max(0, indexAfter(list, Math.min(deadline, now)) - first);
        let status: ExpectedFile['status'];
        let arrivedAt: number | undefined;
        if (count >= this.rule.min_count) {
          status = 'arrived';
          arrivedAt = list[first + this.rule.min_count - 1];
        } else if (deadline > now) {
          // Past the warning time with too few: the page says what the warning says, not "not due yet".
          const lead = this.lead(key);
          status = lead > 0 && now >= deadline - lead ? 'in_jeopardy' : 'not_due';
        } else {
          // Late only by a file before its close: a later one is the next occurrence's (11c).
          arrivedAt = list.find((t) => t > deadline && t <= now && t <= closes);
          status = arrivedAt !== undefined ? 'late' : decidable ? 'missing' : 'awaiting_data';
        }
        out.push({
          rule: this.rule.name,
          ...(this.rule.for_each ? { key: { label: this.rule.for_each.label, value: key } } : {}),
          files: this.rule.match.file ?? [],
          deadline,
          windowStart,
          timezone: this.rule.timezone,
          status,
          ...(arrivedAt !== undefined ? { arrivedAt } : {}),
          count,
          minCount: this.rule.min_count,
          ...(this.rule.warn_before === 'auto' ? { learnedWarning: this.learnedWarning(key, deadline) } : {}),
        });
      }
    }
    return out;
  }

  nextWakeup(now: number): number | undefined {
    const next = this.nextDeadline(now);
    const times: number[] = [];
    if (next !== undefined) {
      times.push(next);
      // Every key's warning time (learned ones differ per key), this deadline's or the next one's.
      const leads = this.rule.warn_before === 'auto' ? this.keys.map((k) => this.lead(k)) : [this.rule.warn_before];
      for (const lead of new Set(leads)) {
        if (lead <= 0) continue;
        const warnAt = next - lead;
        if (warnAt > now) times.push(warnAt);
        else {
          const after = this.nextDeadline(next);
          if (after !== undefined && after - lead > now) times.push(after - lead);
        }
      }
    }
    return times.length > 0 ? Math.min(...times) : undefined;
  }
}

export const missingFileRuleType = defineRuleType<MissingFileRule>({
  type: 'missing_file',
  schema: missingFileSchema,
  templateVariables: TEMPLATE_VARIABLES,
  extraTemplates: (rule) => ({ warn_annotations: rule.warn_annotations }),
  create: (rule, ctx) => new MissingFileEvaluator(rule, ctx),
});

/** The rule's days without a deadline: its named calendar (from `calendars:`) or the one written in the rule. */
export function resolveCalendar(rule: MissingFileRule, ctx: Pick<EvaluatorContext, 'calendars'>): { excludes(day: LocalDay): boolean; empty: boolean } {
  if (typeof rule.calendar === 'string') {
    const named = ctx.calendars?.get(rule.calendar);
    // Names are checked when rules are loaded (check, start, reload); an engine without calendars (test-rules
    // without a config) must still run the rule, on every day.
    return named ? unionCalendar([named]) : { excludes: () => false, empty: true };
  }
  return unionCalendar([new BusinessCalendar(rule.calendar)]);
}

/** Consecutive deadlines sampled to find where a configured `sla.late_until` is cut (the shortest gap wins). */
const CUT_SAMPLE = 32;

/**
 * The late file of `deadline` in a key's sorted arrivals: the first after it, if it came by `now` and before the
 * occurrence closes (contract 11c: one after the close is the next occurrence's).
 */
function lateFileOf(list: readonly number[], deadline: number, closes: number | undefined, now: number): number | undefined {
  const next = list[indexAfter(list, deadline)];
  return next !== undefined && next <= now && (closes === undefined || next <= closes) ? next : undefined;
}

/**
 * How long a late file can count at most for this rule (contract 11c): the shortest gap between two deadlines less the
 * window (the next window opens then; where windows overlap, the gap). Undefined without a configured
 * `sla.late_until`, or when it is not cut. `check` warns with it.
 */
export function lateUntilCut(rule: MissingFileRule, now: number): number | undefined {
  const lateUntil = rule.sla?.late_until;
  if (lateUntil === undefined) return undefined;
  const runs = new Cron(rule.deadline, { timezone: rule.timezone, paused: true }).nextRuns(CUT_SAMPLE, new Date(now)).map((d) => d.getTime());
  let cut = Infinity;
  for (let i = 1; i < runs.length; i++) {
    const deadline = runs[i - 1] as number;
    cut = Math.min(cut, lateLimit(deadline, runs[i] as number, rule.window) - deadline);
  }
  return Number.isFinite(cut) && lateUntil > cut ? cut : undefined;
}

/**
 * The latest a late file can count for a deadline followed by `following` (contract 11c): when the next occurrence's
 * window opens; where the windows overlap (a window longer than the gap), the next deadline.
 */
function lateLimit(deadline: number, following: number, window: number): number {
  return following - window >= deadline ? following - window : following;
}
