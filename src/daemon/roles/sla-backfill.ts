import type { HistoryStore } from '../../history/history-store.js';
import type { TransferWatchMetrics } from '../../metrics/transfer-watch-metrics.js';
import type { RuleDefinition } from '../../rules/registry.js';
import type { RuleEngine } from '../../rules/rule-engine.js';
import { ledgerEngine, type LedgerReadOptions } from './ledger-engine.js';
import { errorFields, errorMessageWithCode } from '../../util/errors.js';
import type { Transfer } from '../../source/transfer.js';
import { streamProgress } from './source-polling-role.js';
import { RESULT_OF } from '../../poller/stream-kind.js';
import type { PollStream } from '../../poller/poll-stream.js';
import { readRecord } from '../../source/record.js';
import { windowKey, type BackfillPlan, type SpooledWindow } from '../../history/backfill-spool.js';
import type { OccurrenceRecord } from '../../sla/occurrence.js';
import { FlowSummaries } from '../../flows/flow-summary.js';
import { GIVEN_UP_WINDOWS } from './sla-backfill-retry.js';
import { flowDayRecord } from '../../flows/flow-day-record.js';

/** Occurrences written per transaction. */
const WRITE_BATCH = 1_000;
/** How often a backfill waiting for the first committed window (a first start) looks again. */
const WAIT_FOR_CURSOR_MS = 1_000;
/**
 * Reads of one source window before the backfill gives it up (counted across restarts): the deadlines whose windows
 * it touches are then no_data. The first retry after READ_RETRY_MS, doubling up to READ_RETRY_MAX_MS: about 20
 * minutes of an unreadable window in all.
 */
export const WINDOW_ATTEMPTS = 8;
const READ_RETRY_MS = 10_000;
const READ_RETRY_MAX_MS = 600_000;

export interface SlaBackfillOptions extends LedgerReadOptions {
  store: HistoryStore;
  metrics: TransferWatchMetrics;
  /** False once this leadership ended: the backfill stops (the next leader does it, as it is not marked done). */
  current: () => boolean;
  /** The wait before the first read again of a history not read whole (doubling); default READ_RETRY_MS. */
  readRetryMs?: number;
  /**
   * The read's last `handOverSpan` of the transfers the filled rules keep, per source, for the live rules: a first
   * start's deadlines whose windows began before the first poll are judged on them (the seam of backfill and live).
   */
  handOver?: (read: HandedOverRead) => void;
  handOverSpan?: number;
}

/** One source's history read whole by the backfill, and the transfers of its end that the rules keep. */
export interface HandedOverRead {
  source: string;
  from: number;
  until: number;
  transfers: Transfer[];
}

/**
 * Fill the SLA ledger from the service's history (contract section 11, `sla.backfill`): for every missing_file rule
 * the ledger was never filled for (a first start, or a rule added later), re-read that much of each source's
 * history once, judge every deadline in it as the live rule would, and write the occurrences. Idempotent: the
 * occurrences are upserted by id and the rule is marked done only at the end; an interrupted backfill is resumed by the
 * next start or leader from the windows it kept in the database (BackfillSpool).
 */
export async function backfillSlaLedger(o: SlaBackfillOptions): Promise<void> {
  const slaSpan = o.config.sla.backfill;
  const flowSpan = o.config.flows.backfill ?? slaSpan;
  const pending: RuleDefinition[] = [];
  if (slaSpan > 0) {
    for (const rule of o.rules) {
      if (rule.type !== 'missing_file') continue;
      if ((await o.store.ledger.backfilledThrough(rule.name)) === undefined) pending.push(rule);
    }
  }
  // The flow summary is filled by the same read when the spans agree (contract section 13), by one of its own else.
  const flowsPending = flowSpan > 0 && (await o.store.ledger.backfilledThrough(FLOWS_BACKFILL)) === undefined;
  // What an earlier backfill kept of a read nothing needs any more (its rules filled, its span changed) is dropped.
  // (The windows it gave up are kept apart, to be read again: contract 12a.)
  const needed = [...[...(pending.length > 0 ? [slaSpan] : []), ...(flowsPending ? [flowSpan] : [])].map(planIdOf), GIVEN_UP_WINDOWS];
  try {
    const dropped = await o.store.spool.drop(undefined, needed);
    if (dropped > 0) o.logger.info({ plans: dropped }, 'SLA backfill: dropped what an earlier backfill kept of a read no longer needed');
  } catch (err) {
    o.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not drop what an earlier backfill kept');
  }
  if (flowsPending && flowSpan === slaSpan) {
    await backfillSpan(o, slaSpan, pending, true);
    return;
  }
  if (pending.length > 0) await backfillSpan(o, slaSpan, pending, false);
  if (flowsPending) await backfillSpan(o, flowSpan, [], true);
}

/** One read of `span` of every source's history: the pending rules' occurrences and (withFlows) the flow days. */
async function backfillSpan(o: SlaBackfillOptions, span: number, pending: readonly RuleDefinition[], flowsPending: boolean): Promise<void> {
  if (pending.length === 0 && !flowsPending) return;
  const started = o.clock.now();
  o.metrics.setSlaBackfill(pending.length, 0);
  o.logger.info(
    { rules: pending.map((r) => r.name), flows: flowsPending, span_ms: span },
    pending.length > 0 ? 'SLA backfill: filling the ledger from the service history' : 'SLA backfill: filling the flow summary from the service history',
  );
  // A history that could not be read whole (a window answered 500, too large, endless) is no verdict: each window
  // that failed is read again, alone, with backoff, its deadlines pending meanwhile; every window read is kept in the
  // database, so a backfill stopped (a restart, a leader change) resumes where it was. Only a window that failed
  // WINDOW_ATTEMPTS times (counted across restarts) is given up: the deadlines whose windows it touches are no_data.
  const planId = planIdOf(span);
  const read = await readHistory(o, pending, span, flowsPending, planId);
  if (read === undefined) return;
  const { engine, records, until, from, flows, handOver, unread } = read;
  if (unread.length > 0) {
    o.logger.warn(
      { rules: pending.map((x) => x.name), windows: unread.map((w) => ({ stream: w.stream, start: new Date(w.start).toISOString(), end: new Date(w.end).toISOString(), error: w.error })) },
      `SLA backfill: ${unread.length} source window(s) could not be read after ${WINDOW_ATTEMPTS} attempts; the deadlines whose windows they touch are written no_data`,
    );
  }
  // The live rules take the read's end: deadlines after it whose windows began before the first poll are judged.
  if (pending.length > 0) for (const h of handOver) o.handOver?.(h);
  o.metrics.setSlaBackfill(pending.length, records);
  const covered = until > from ? { from, until, unread } : undefined;
  const windowStart = Number.isFinite(from) ? from : started - span;
  const to = covered ? covered.until : started;
  let written = flowsPending ? await writeFlows(o, flows, windowStart, to) : true;
  for (const { rule, occurrences } of engine.occurrencesBetween(windowStart, to, covered ?? { from: Infinity, until: -Infinity })) {
    written = (await writeRule(o, rule, occurrences, windowStart, to)) && written;
  }
  // Done: what was kept of the read is dropped (a write that failed keeps it, for the next start to judge again), but
  // the windows given up, which are read again at every start and every sla.backfill_retry (contract 12a).
  if (written) {
    try {
      for (const w of unread) await o.store.spool.saveFailure(GIVEN_UP_WINDOWS, w.stream, w, w.error ?? '', WINDOW_ATTEMPTS, o.clock.now());
      await o.store.spool.drop(planId);
    } catch (err) {
      o.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not drop the windows kept of its read; dropped at the next start');
    }
  }
  o.metrics.setSlaBackfill(0, records);
  o.logger.info({ rules: pending.length, transfers: records, seconds: Math.round((o.clock.now() - started) / 1000) }, 'SLA backfill done');
}

/** One rule's occurrences, judged and written a batch at a time, then the rule marked filled; false when not. */
async function writeRule(o: SlaBackfillOptions, rule: string, occurrences: Iterable<OccurrenceRecord>, from: number, to: number): Promise<boolean> {
  try {
    // Judged a batch at a time, each written before the next is judged, with a turn of the event loop between
    // them for the polls, the health checks and the scrapes waiting meanwhile (an await of a settled write does
    // not give one).
    const outcomes: Record<string, number> = {};
    let written = 0;
    let batch: OccurrenceRecord[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length > 0) await o.store.write(batch);
      written += batch.length;
      batch = [];
      await new Promise((resolve) => setImmediate(resolve));
    };
    for (const occ of occurrences) {
      outcomes[occ.outcome] = (outcomes[occ.outcome] ?? 0) + 1;
      batch.push(occ);
      if (batch.length >= WRITE_BATCH) await flush();
    }
    await flush();
    await o.store.ledger.markBackfilled(rule, from, to, o.clock.now());
    o.logger.info({ rule, occurrences: written, outcomes, from: new Date(from).toISOString(), to: new Date(to).toISOString() }, 'SLA backfill: rule filled');
    return true;
  } catch (err) {
    o.logger.warn({ rule, err: errorFields(err) }, 'SLA backfill: could not write the occurrences; tried again at the next start or leader change');
    return false;
  }
}

/** The key of a backfill's read of `span` in the database: the rules and the flow summary read it alike. */
function planIdOf(span: number): string {
  return `span:${span}`;
}

/**
 * The flow summary's mark in `sla_backfills`: a rule name is an alert name (letters, digits, `_`), so no rule can
 * take it.
 */
export const FLOWS_BACKFILL = '@flows';

/** Every flow day of the backfill's read, in batches that yield, then marked filled. */
async function writeFlows(o: SlaBackfillOptions, flows: FlowSummaries, from: number, to: number): Promise<boolean> {
  const records = flows.all().flatMap((f) => [...f.days.values()].map((d) => flowDayRecord(f, d)));
  try {
    for (let i = 0; i < records.length; i += WRITE_BATCH) {
      await o.store.write(records.slice(i, i + WRITE_BATCH));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await o.store.ledger.markBackfilled(FLOWS_BACKFILL, from, to, o.clock.now());
    o.logger.info({ flows: flows.size, flow_days: records.length, from: new Date(from).toISOString(), to: new Date(to).toISOString() }, 'SLA backfill: flow summary filled');
    return true;
  } catch (err) {
    o.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not write the flow summary; tried again at the next start or leader change');
    return false;
  }
}

interface HistoryRead {
  /** Per source read whole: the end of the read for the live rules (`handOver`). */
  handOver: HandedOverRead[];
  /** The successful transfers read, as flow days (empty unless the flow summary was to be filled). */
  flows: FlowSummaries;
  engine: RuleEngine;
  records: number;
  /** The span every source was read over (from the latest start to the earliest cursor). */
  from: number;
  until: number;
  /** The windows given up after WINDOW_ATTEMPTS failed reads. */
  unread: UnreadWindow[];
}

interface UnreadWindow {
  stream: string;
  start: number;
  end: number;
  error: string | null;
}

function unreadWindow(w: PlannedWindow): UnreadWindow {
  return { stream: w.stream.id, start: w.start, end: w.end, error: w.error };
}

/** What the backfill uses of a poll stream: which it is, its cursor, its windows and one window's read. */
type ReplayStream = Pick<PollStream, 'id' | 'source' | 'kind' | 'cursor' | 'replayWindows' | 'readWindow'>;

/** One source window to read: from the database when kept, else from the service. */
interface PlannedWindow {
  source: BackfillPlan['sources'][number];
  stream: ReplayStream;
  start: number;
  end: number;
  kept: boolean;
  attempts: number;
  error: string | null;
  /** When (wall clock) it may be read again after a failure: its backoff runs across restarts (see readHistory). */
  dueAt: number;
}

/**
 * The read of every source's history into a new engine, window by window, each window kept in the database once read
 * (a resumed read takes them from there); undefined when this leadership ended meanwhile.
 */
async function readHistory(o: SlaBackfillOptions, pending: readonly RuleDefinition[], span: number, withFlows: boolean, planId: string): Promise<HistoryRead | undefined> {
  const planned = await planOf(o, span, planId);
  if (planned === undefined) return undefined;
  const { plan, streams, resumed } = planned;
  const flows = new FlowSummaries();
  const engine = ledgerEngine(pending, o);
  const kept = new Map<string, Transfer[]>();
  let records = 0;
  const observe = (source: BackfillPlan['sources'][number], transfers: readonly Transfer[]): void => {
    const keepAfter = source.until - (o.handOverSpan ?? 0);
    let list = kept.get(source.source);
    if (!list) kept.set(source.source, (list = []));
    for (const t of transfers) {
      records++;
      if (records % 10_000 === 0) o.metrics.setSlaBackfill(pending.length, records);
      if (engine.observe(t) && t.time > keepAfter && t.time <= source.until) list.push(t);
      if (withFlows) flows.add(t);
    }
  };

  const spool = new KeptWindows(o, planId);
  const known = await spool.known();
  const windows: PlannedWindow[] = [];
  for (const source of plan.sources) {
    for (const s of source.streams) {
      const stream = streams.get(s.id) as ReplayStream;
      for (const w of stream.replayWindows(source.from, s.end)) {
        const k = known.get(windowKey(s.id, w.start));
        const kept = k?.read === true && k.end === w.end;
        // A window that failed in an earlier life waits out what is left of its backoff from its last try: a restart
        // does not bring its next read forward, so giving it up takes the documented time however often the daemon
        // restarts (8 reads in 4 minutes across restarts, instead of about 20).
        const attempts = k?.attempts ?? 0;
        const dueAt = !kept && k !== undefined && attempts > 0 ? Date.now() + Math.max(0, k.at + retryWait(o, attempts) - o.clock.now()) : 0;
        windows.push({ source, stream, ...w, kept, attempts, error: k?.error ?? null, dueAt });
      }
    }
  }
  const givenUp = (w: PlannedWindow): boolean => !w.kept && w.attempts >= WINDOW_ATTEMPTS;
  const unread = windows.filter(givenUp).map(unreadWindow);
  let todo = windows.filter((w) => !givenUp(w));
  if (resumed) o.logger.info({ windows: windows.length, kept: windows.filter((w) => w.kept).length, given_up: unread.length }, 'SLA backfill: resuming its read (the windows kept are not read again)');
  let read = 0;
  // Each window is pending (not tried yet), failing (failed, read again with backoff), read, or unread (given up):
  // `failing` counts only windows that failed — a healthy backfill of 465 windows showed 465 failing (issue 53).
  // A window that failed in an earlier life is failing from the start of this one (it counted as not tried, and its
  // next failure took `failing` to 0: a restart hid the window the backfill was stuck on).
  const failedBefore = (w: PlannedWindow): boolean => !w.kept && w.attempts > 0;
  let failing = todo.filter(failedBefore).length;
  let untried = todo.length - failing;
  const report = (): void => o.metrics.setSlaBackfillWindows({ read, pending: untried, failing, unread: unread.length });
  report();
  for (let round = 1; todo.length > 0; round++) {
    // The windows due now (each after its own backoff), the streams in parallel, each one's windows in order (as a
    // replay reads them); the others wait for their turn.
    const now = Date.now();
    const due = todo.filter((w) => w.dueAt <= now);
    if (due.length === 0) {
      const next = Math.min(...todo.map((w) => w.dueAt));
      if (!o.current()) return undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(1_000, next - Date.now()))));
      continue;
    }
    const failed: PlannedWindow[] = [];
    const byStream = new Map<ReplayStream, PlannedWindow[]>();
    for (const w of due) {
      const list = byStream.get(w.stream);
      if (list) list.push(w);
      else byStream.set(w.stream, [w]);
    }
    await Promise.all(
      [...byStream.values()].map(async (list) => {
        for (const w of list) {
          if (!o.current()) return;
          const retried = failedBefore(w);
          const transfers = await readWindow(o, spool, w);
          if (retried) failing--;
          else untried--;
          if (transfers === undefined) {
            if (w.attempts >= WINDOW_ATTEMPTS) unread.push(unreadWindow(w));
            else {
              w.dueAt = Date.now() + retryWait(o, w.attempts);
              failed.push(w);
              failing++;
            }
          } else {
            observe(w.source, transfers);
            read++;
          }
          report();
        }
      }),
    );
    if (!o.current()) return undefined;
    const dueSet = new Set(due);
    todo = [...todo.filter((w) => !dueSet.has(w)), ...failed];
    if (failed.length > 0) {
      o.logger.warn(
        { windows: failed.length, sources: [...new Set(failed.map((w) => w.source.source))], round, retry_in_seconds: Math.round((Math.min(...failed.map((w) => w.dueAt)) - Date.now()) / 1000), first_error: failed[0]?.error },
        'SLA backfill: part of the history could not be read; its windows are read again (their deadlines wait, no verdict)',
      );
    }
  }
  report();

  let until = Infinity;
  let from = -Infinity;
  const handOver: HandedOverRead[] = [];
  for (const source of plan.sources) {
    until = Math.min(until, source.until);
    from = Math.max(from, source.from);
    // The live rules judge on the read's end only after its last window given up: no verdict across a hole.
    const streamIds = new Set(source.streams.map((s) => s.id));
    // Only what was kept is handed over (the read's last handOverSpan): the live rules are told they have the history
    // from there, never from the read's start — a weekly deadline nine days back, its late file not handed over, was
    // judged missing by the live rule over a week it had not been given (and, final, the backfill's late kept out).
    const keptFrom = source.until - (o.handOverSpan ?? 0) + 1;
    const after = Math.max(source.from, keptFrom, ...unread.filter((w) => streamIds.has(w.stream)).map((w) => w.end + 1));
    if (o.handOver && after < source.until) handOver.push({ source: source.source, from: after, until: source.until, transfers: (kept.get(source.source) ?? []).filter((t) => t.time >= after) });
  }
  return { engine, flows, handOver, records, from, until, unread };
}

/** The wait before the next read of a window that failed `attempts` times: READ_RETRY_MS doubling, at most READ_RETRY_MAX_MS. */
function retryWait(o: SlaBackfillOptions, attempts: number): number {
  return Math.min(READ_RETRY_MAX_MS, (o.readRetryMs ?? READ_RETRY_MS) * 2 ** Math.max(0, attempts - 1));
}

/** One window's transfers: those kept (parsed again), else read from the service and kept; undefined when it failed. */
async function readWindow(o: SlaBackfillOptions, spool: KeptWindows, w: PlannedWindow): Promise<Transfer[] | undefined> {
  if (w.kept) {
    const transfers = await spool.transfers(w);
    if (transfers !== undefined) return transfers;
  }
  try {
    const transfers = await w.stream.readWindow({ start: w.start, end: w.end });
    await spool.keep(w, transfers);
    return transfers;
  } catch (err) {
    w.attempts += 1;
    w.error = errorMessageWithCode(err);
    await spool.fail(w);
    return undefined;
  }
}

/**
 * The plan of this backfill: the one kept in the database (a resumed read: the same span, sources and streams), else a
 * new one from the cursors of the first committed windows. Undefined when this leadership ended while waiting.
 */
async function planOf(o: SlaBackfillOptions, span: number, planId: string): Promise<{ plan: BackfillPlan; streams: Map<string, ReplayStream>; resumed: boolean } | undefined> {
  const pollers = o.config.sources.map((source) => ({ source, poller: o.replayPoller(source) }));
  const streams = new Map<string, ReplayStream>();
  for (const { poller } of pollers) for (const s of poller.streams) if (RESULT_OF[s.kind] === 'success') streams.set(s.id, s);
  let kept: BackfillPlan | undefined;
  try {
    kept = await o.store.spool.plan(planId);
  } catch (err) {
    o.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not read what an earlier backfill kept; reading the whole span');
  }
  const sameStreams = (p: BackfillPlan): boolean =>
    p.span === span &&
    p.sources.length === pollers.length &&
    pollers.every(({ source }) => {
      const planned = p.sources.find((x) => x.source === source.name);
      const ids = [...streams.values()].filter((s) => s.source === source.name).map((s) => s.id);
      return planned !== undefined && planned.streams.length === ids.length && planned.streams.every((s) => ids.includes(s.id));
    });
  if (kept !== undefined && sameStreams(kept)) return { plan: kept, streams, resumed: true };

  const plan: BackfillPlan = { span, sources: [] };
  for (const { source, poller } of pollers) {
    // A first start: the history up to the first committed window is what this backfill covers — of every stream of
    // successes: one not yet committed has no cursor, and a replay reads nothing of it (a demo whose failures were
    // committed a moment before its successes learned no flow at all).
    const committed = async (): Promise<boolean> => (await poller.restore()) && streamProgress(poller).every((p) => p.result !== 'success' || p.cursor !== undefined);
    while (!(await committed())) {
      if (!o.current()) return undefined;
      await new Promise((r) => setTimeout(r, WAIT_FOR_CURSOR_MS));
    }
    const mine = poller.streams.filter((s) => RESULT_OF[s.kind] === 'success' && s.cursor !== undefined);
    const until = mine.length > 0 ? Math.min(...mine.map((s) => s.cursor as number)) : o.clock.now();
    plan.sources.push({ source: source.name, from: until - span, until, streams: mine.map((s) => ({ id: s.id, end: s.cursor as number })) });
    o.logger.info({ source: source.name, from: new Date(until - span).toISOString(), to: new Date(until).toISOString() }, 'SLA backfill: reading the source history');
  }
  try {
    await o.store.spool.begin(planId, plan, o.clock.now());
  } catch (err) {
    o.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not keep its plan in the database; a stopped backfill will read its whole span again');
  }
  return { plan, streams, resumed: false };
}

/**
 * The windows of this backfill kept in the database. The history store may refuse (full, read-only, down): the read
 * goes on in memory, said once in the log — only a resume loses what was not kept.
 */
class KeptWindows {
  private warned = false;

  constructor(
    private readonly o: SlaBackfillOptions,
    private readonly planId: string,
  ) {}

  async known(): Promise<Map<string, SpooledWindow>> {
    try {
      return await this.o.store.spool.windows(this.planId);
    } catch (err) {
      this.warn(err);
      return new Map();
    }
  }

  /** The transfers of a kept window, parsed again as the service's records; undefined when they cannot be read. */
  async transfers(w: PlannedWindow): Promise<Transfer[] | undefined> {
    let raw: unknown[] | undefined;
    try {
      raw = await this.o.store.spool.records(this.planId, w.stream.id, w.start);
    } catch (err) {
      this.warn(err);
      return undefined;
    }
    if (raw === undefined) return undefined;
    const transfers: Transfer[] = [];
    for (const r of raw) {
      const t = readRecord(r, w.source.source);
      if (typeof t === 'string') return undefined;
      transfers.push(t);
    }
    return transfers;
  }

  async keep(w: PlannedWindow, transfers: readonly Transfer[]): Promise<void> {
    try {
      await this.o.store.spool.saveRead(
        this.planId,
        w.stream.id,
        w,
        transfers.map((t) => t.record),
        w.attempts,
        this.o.clock.now(),
      );
    } catch (err) {
      this.warn(err);
    }
  }

  async fail(w: PlannedWindow): Promise<void> {
    try {
      await this.o.store.spool.saveFailure(this.planId, w.stream.id, w, w.error ?? '', w.attempts, this.o.clock.now());
    } catch (err) {
      this.warn(err);
    }
  }

  private warn(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    this.o.logger.warn({ err: errorFields(err) }, 'SLA backfill: the history store does not keep its read windows; it goes on in memory (a stopped backfill would read them again)');
  }
}
