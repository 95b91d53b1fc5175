import type { Config, SourceConfig } from '../../config/schema.js';
import type { HistoryStore } from '../../history/history-store.js';
import type { TransferWatchMetrics } from '../../metrics/transfer-watch-metrics.js';
import type { Poller } from '../../poller/poller.js';
import type { RuleDefinition } from '../../rules/registry.js';
import { RuleEngine } from '../../rules/rule-engine.js';
import { BusinessCalendar } from '../../sla/business-calendar.js';
import type { Clock } from '../../util/clock.js';
import { errorFields } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import type { Transfer } from '../../source/transfer.js';
import { streamProgress } from './source-polling-role.js';
import type { OccurrenceRecord } from '../../sla/occurrence.js';
import { FlowSummaries } from '../../flows/flow-summary.js';
import { flowDayRecord } from '../../flows/flow-day-record.js';

/** Occurrences written per transaction. */
const WRITE_BATCH = 1_000;
/** How often a backfill waiting for the first committed window (a first start) looks again. */
const WAIT_FOR_CURSOR_MS = 1_000;
/** Reads of the whole history before a backfill gives up until the next start, the first retry after READ_RETRY_MS, doubling. */
const READ_ATTEMPTS = 4;
const READ_RETRY_MS = 10_000;

export interface SlaBackfillOptions {
  config: Config;
  rules: readonly RuleDefinition[];
  store: HistoryStore;
  replayPoller: (source: SourceConfig) => Poller;
  clock: Clock;
  logger: Logger;
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
 * occurrences are upserted by id and the rule is marked done only at the end, so an interrupted backfill is done
 * again by the next leader.
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
  // A history that could not be read whole (a window answered 500, too large, endless) is no verdict: the whole read
  // is tried again with a fresh engine (a partial one would count its arrivals twice), and after READ_ATTEMPTS the
  // rules stay unfilled — no occurrence written, none marked filled — for the next start or leader to try again.
  let read: HistoryRead | undefined;
  for (let attempt = 1; ; attempt++) {
    const r = await readHistory(o, pending, span, flowsPending);
    if (r === undefined) return;
    if (r.unread.length === 0) {
      read = r;
      break;
    }
    if (attempt >= READ_ATTEMPTS) {
      o.metrics.setSlaBackfill(0, r.records);
      o.logger.warn(
        { rules: pending.map((x) => x.name), sources: r.unread, attempts: attempt },
        'SLA backfill: the history could not be read whole; nothing is written for these rules (no verdict on an unread window), and the backfill is tried again at the next start or leader change',
      );
      return;
    }
    const waitMs = (o.readRetryMs ?? READ_RETRY_MS) * 2 ** (attempt - 1);
    o.logger.warn({ sources: r.unread, attempt, retry_in_seconds: waitMs / 1000 }, 'SLA backfill: part of the history could not be read; reading it again');
    for (const until = Date.now() + waitMs; Date.now() < until; ) {
      if (!o.current()) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, until - Date.now())));
    }
  }
  const { engine, records, until, from, flows, handOver } = read;
  // The live rules take the read's end: deadlines after it whose windows began before the first poll are judged.
  if (pending.length > 0) for (const h of handOver) o.handOver?.(h);
  o.metrics.setSlaBackfill(pending.length, records);
  const covered = until > from ? { from, until } : undefined;
  const windowStart = Number.isFinite(from) ? from : started - span;
  const to = covered ? covered.until : started;
  if (flowsPending) await writeFlows(o, flows, windowStart, to);
  for (const { rule, occurrences } of engine.occurrencesBetween(windowStart, to, covered ?? { from: Infinity, until: -Infinity })) {
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
      await o.store.ledger.markBackfilled(rule, windowStart, to, o.clock.now());
      o.logger.info({ rule, occurrences: written, outcomes, from: new Date(windowStart).toISOString(), to: new Date(to).toISOString() }, 'SLA backfill: rule filled');
    } catch (err) {
      o.logger.warn({ rule, err: errorFields(err) }, 'SLA backfill: could not write the occurrences; tried again at the next start or leader change');
    }
  }
  o.metrics.setSlaBackfill(0, records);
  o.logger.info({ rules: pending.length, transfers: records, seconds: Math.round((o.clock.now() - started) / 1000) }, 'SLA backfill done');
}

/**
 * The flow summary's mark in `sla_backfills`: a rule name is an alert name (letters, digits, `_`), so no rule can
 * take it.
 */
export const FLOWS_BACKFILL = '@flows';

/** Every flow day of the backfill's read, in batches that yield, then marked filled. */
async function writeFlows(o: SlaBackfillOptions, flows: FlowSummaries, from: number, to: number): Promise<void> {
  const records = flows.all().flatMap((f) => [...f.days.values()].map((d) => flowDayRecord(f, d)));
  try {
    for (let i = 0; i < records.length; i += WRITE_BATCH) {
      await o.store.write(records.slice(i, i + WRITE_BATCH));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await o.store.ledger.markBackfilled(FLOWS_BACKFILL, from, to, o.clock.now());
    o.logger.info({ flows: flows.size, flow_days: records.length, from: new Date(from).toISOString(), to: new Date(to).toISOString() }, 'SLA backfill: flow summary filled');
  } catch (err) {
    o.logger.warn({ err: errorFields(err) }, 'SLA backfill: could not write the flow summary; tried again at the next start or leader change');
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
  /** Sources whose history could not be read whole. */
  unread: string[];
}

/** One read of every source's history into a new engine; undefined when this leadership ended meanwhile. */
async function readHistory(o: SlaBackfillOptions, pending: readonly RuleDefinition[], span: number, withFlows: boolean): Promise<HistoryRead | undefined> {
  const flows = new FlowSummaries();
  const handOver: HandedOverRead[] = [];
  const engine = new RuleEngine([...pending], {
    clock: o.clock,
    logger: o.logger,
    sources: o.config.sources.map((s) => s.name),
    displayTimezone: o.config.display_timezone,
    keepHistory: true,
    calendars: new Map(Object.entries(o.config.calendars).map(([name, c]) => [name, new BusinessCalendar(c)])),
  });
  let until = Infinity;
  let from = -Infinity;
  let records = 0;
  const unread: string[] = [];
  for (const source of o.config.sources) {
    const poller = o.replayPoller(source);
    // A first start: the history up to the first committed window is what this backfill covers — of every stream of
    // successes: one not yet committed has no cursor, and a replay reads nothing of it (a demo whose failures were
    // committed a moment before its successes learned no flow at all).
    const committed = async (): Promise<boolean> => (await poller.restore()) && streamProgress(poller).every((p) => p.result !== 'success' || p.cursor !== undefined);
    while (!(await committed())) {
      if (!o.current()) return undefined;
      await new Promise((r) => setTimeout(r, WAIT_FOR_CURSOR_MS));
    }
    const cursors = streamProgress(poller)
      .filter((p) => p.result === 'success' && p.cursor !== undefined)
      .map((p) => p.cursor as number);
    const cursor = cursors.length > 0 ? Math.min(...cursors) : o.clock.now();
    o.logger.info({ source: source.name, from: new Date(cursor - span).toISOString(), to: new Date(cursor).toISOString() }, 'SLA backfill: reading the source history');
    const kept: Transfer[] = [];
    const keepAfter = cursor - (o.handOverSpan ?? 0);
    const complete = await poller.replay(o.clock.now() - (cursor - span), (t) => {
      records++;
      if (records % 10_000 === 0) o.metrics.setSlaBackfill(pending.length, records);
      if (engine.observe(t) && t.time > keepAfter && t.time <= cursor) kept.push(t);
      if (withFlows) flows.add(t);
    });
    if (!o.current()) return undefined;
    if (complete) {
      until = Math.min(until, cursor);
      from = Math.max(from, cursor - span);
      if (o.handOver) handOver.push({ source: source.name, from: cursor - span, until: cursor, transfers: kept });
    } else {
      unread.push(source.name);
    }
  }
  return { engine, flows, handOver, records, from, until, unread };
}
