import type { Config, SourceConfig } from '../../config/schema.js';
import type { HistoryStore } from '../../history/history-store.js';
import type { Poller } from '../../poller/poller.js';
import type { RuleEngine } from '../../rules/rule-engine.js';
import type { RuleDefinition } from '../../rules/registry.js';
import type { Transfer } from '../../source/transfer.js';
import type { StreamProgress } from '../../cluster/transfer-bus.js';
import type { Clock } from '../../util/clock.js';
import { errorFields } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { streamProgress } from './source-polling-role.js';

/** Rule windows are rebuilt from at most this much history after a restart or reload, whatever a rule asks. */
export const MAX_REPLAY_MS = 2 * 86_400_000;
/**
 * The seam of a stop (the deadlines that came while nothing ran) is filled from at most this much history: a stop
 * longer than this leaves its oldest deadlines unjudged, said in the log (`sla rejudge` can judge them).
 */
export const MAX_SEAM_MS = 7 * 86_400_000;
/** A source whose history could not be re-read at a start is read again this often, while this leadership lasts. */
const REREAD_EVERY_MS = 30_000;

/**
 * What a rule knows, where it is kept, and how the next process — the same node restarted or another replica taking
 * the lead — takes it up (contract section 11b). A cluster of one and of three run this same code; only where the
 * leader's state lives differs (state.dir, or Redis with `ha:`).
 *
 * | what                                    | kept in                                   | taken up by                                   |
 * |-----------------------------------------|-------------------------------------------|-----------------------------------------------|
 * | alerts: firing, pending, startsAt, held | AlertStore snapshot, leader's state       | `AlertStore.restore`, before any evaluation   |
 * | notification log, outbox, silences      | Notifier state, leader's / shared state   | `Notifier.restore`                            |
 * | rule windows (arrivals, failures)       | not kept: the service's history           | `rebuild` (here): re-read before the cursors  |
 * | how far each source is read             | the pollers' cursors (`since`, `cursor`)  | BusProgress, seeded then fed by the bus       |
 * | the ledger's occurrences                | the history database                      | `seams` (here): the last deadline judged      |
 * | warnings raised, decisions counted      | alert snapshot; SLA counted (leader state)| the rule's last words for an open warning     |
 *
 * The order is what makes a restart change nothing: alerts are restored first; the windows are rebuilt before the
 * first evaluation; a rule whose sources are not read whole yet (the new process reads its way to the present) is
 * *undecided* — its alerts stay as they were, resolved only for a cause the history shows; the deadlines that came
 * while nothing ran (the seam, from the ledger's last one) are judged from the history once it is read that far, each
 * once, not counted as live decisions. A source whose history cannot be re-read at the start is read again in the
 * background until it is (`rereadFailed`), its windows judged from then on.
 */
export class RuleContinuity {
  constructor(
    private readonly opts: {
      config: () => Config;
      clock: Clock;
      logger: Logger;
      /** A poller of one source that reads its committed cursors and re-reads history before them. */
      replayPoller: (source: SourceConfig) => Poller;
      history: HistoryStore | undefined;
    },
  ) {}

  /**
   * Per missing_file rule, the last deadline the ledger holds (within MAX_SEAM_MS): the next process judges the
   * deadlines after it. Empty without a history, or when the database does not answer (said in the log: the deadlines
   * of the stop are then judged only as far as the live rules see them).
   */
  async seams(rules: readonly RuleDefinition[]): Promise<Map<string, number>> {
    const store = this.opts.history;
    if (!store || !rules.some((r) => r.type === 'missing_file')) return new Map();
    try {
      await store.ensureSchema();
      return await store.ledger.lastDeadlines(this.opts.clock.now() - MAX_SEAM_MS);
    } catch (err) {
      this.opts.logger.warn({ err: errorFields(err) }, 'cannot read where the ledger stopped: the deadlines that came while nothing ran are judged only as far as the live rules see them');
      return new Map();
    }
  }

  /** How far back a rebuild reads: the rules' windows, and the seam's oldest deadline's window. */
  span(engine: RuleEngine, seams: ReadonlyMap<string, number>, rules: readonly RuleDefinition[]): number {
    const now = this.opts.clock.now();
    let span = Math.min(engine.historyNeeded(), MAX_REPLAY_MS);
    for (const [rule, last] of seams) span = Math.max(span, Math.min(MAX_SEAM_MS, now - last + windowOf(rules, rule)));
    return span;
  }

  /** From when an engine keeps transfers for the seams (the window of each rule's first deadline after its seam). */
  holdFrom(seams: ReadonlyMap<string, number>, rules: readonly RuleDefinition[]): number | undefined {
    const from = Math.min(...[...seams].map(([rule, last]) => last - windowOf(rules, rule)));
    return Number.isFinite(from) ? from : undefined;
  }

  /**
   * Rebuild an engine's windows from every source's history up to its committed cursors, `span` back. Returns from
   * when on the engine knows history (undefined on a first start: no cursors, polling brings everything there is),
   * the sources that could not be re-read with the cursor they were to be read up to, and each stream's progress as
   * committed.
   */
  async rebuild(engine: RuleEngine, span: number, observeFlow: (t: Transfer) => void): Promise<{ from: number | undefined; failed: UnreadSource[]; progress: StreamProgress[] }> {
    const now = this.opts.clock.now();
    let from: number | undefined;
    const failed: UnreadSource[] = [];
    const progress: StreamProgress[] = [];
    for (const source of this.opts.config().sources) {
      const poller = this.opts.replayPoller(source);
      if (!(await poller.restore())) continue;
      const committed = streamProgress(poller);
      progress.push(...committed);
      const complete = await poller.replay(span, (t) => {
        engine.observe(t);
        observeFlow(t);
      });
      if (!complete) failed.push({ source, until: Math.min(...committed.map((p) => p.cursor ?? Infinity)) });
      from = Math.max(from ?? now - span, complete ? now - span : now);
    }
    return { from, failed, progress };
  }

  /**
   * Read again, every REREAD_EVERY_MS while `current()`, the history of the sources a rebuild could not read: the
   * transfers before the cursors committed at the rebuild (after them the live rules observed them) go to `engine()`,
   * and `adopt(from)` is told once every source is read (the rules judge the windows that began before the start).
   */
  rereadFailed(failed: readonly UnreadSource[], span: number, at: number, engine: () => RuleEngine, current: () => boolean, adopt: (from: number) => void): void {
    let left = [...failed];
    const attempt = async (): Promise<void> => {
      if (!current()) return;
      for (const unread of [...left]) {
        const { source, until } = unread;
        const poller = this.opts.replayPoller(source);
        if (!(await poller.restore())) continue;
        const target = engine();
        const complete = await poller.replay(span + (this.opts.clock.now() - at), (t) => {
          if (t.time <= until) target.observe(t);
        });
        if (!current()) return;
        if (complete) {
          left = left.filter((s) => s !== unread);
          this.opts.logger.info({ source: source.name }, 'the history a start could not re-read is read: rules judge the windows that began before it');
        }
      }
      if (left.length === 0) adopt(at - span);
      else {
        const timer = setTimeout(() => void attempt(), REREAD_EVERY_MS);
        timer.unref();
      }
    };
    this.opts.logger.warn({ sources: failed.map((s) => s.source.name), retry_in_seconds: REREAD_EVERY_MS / 1000 }, 'the history of these sources could not be re-read at the start: their rules judge no window that began before it until it is; reading it again');
    const timer = setTimeout(() => void attempt(), REREAD_EVERY_MS);
    timer.unref();
  }
}

/** A source a rebuild could not re-read, and the cursor it was to be read up to (the live rules saw what came after). */
export interface UnreadSource {
  source: SourceConfig;
  until: number;
}

/** The window of a missing_file rule by name (0 for any other): how far before its first seam deadline to read. */
function windowOf(rules: readonly RuleDefinition[], name: string): number {
  const rule = rules.find((r) => r.name === name);
  return rule?.type === 'missing_file' && 'window' in rule ? rule.window : 0;
}
