import type { HistoryStore } from '../../history/history-store.js';
import type { SpooledWindow } from '../../history/backfill-spool.js';
import type { PollStream } from '../../poller/poll-stream.js';
import { RESULT_OF } from '../../poller/stream-kind.js';
import type { RuleEngine } from '../../rules/rule-engine.js';
import { ledgerEngine, rereadSuccesses, type LedgerReadOptions } from './ledger-engine.js';
import type { OccurrenceRecord } from '../../sla/occurrence.js';
import { errorFields, errorMessageWithCode } from '../../util/errors.js';

/**
 * The backfill's windows given up (read WINDOW_ATTEMPTS times without an answer), kept in the database under this
 * plan id once the backfill is done: a rule name is an alert name (letters, digits, `_`), so no plan can take it.
 */
export const GIVEN_UP_WINDOWS = '@given-up';

export interface BackfillRetryOptions extends LedgerReadOptions {
  store: HistoryStore;
}

/** What one round of reading the given-up windows again did. */
export interface BackfillRetryResult {
  /** Windows given up before this round. */
  windows: number;
  /** Read at last: their deadlines decided. */
  read: number;
  /** Not answered again: read again at the next round. */
  failing: number;
  /** Older than the `sla.backfill` span (the service may not hold them any more): not read again. */
  dropped: number;
  /** `no_data` occurrences replaced by what the history shows. */
  replaced: number;
}

type ReplayStream = Pick<PollStream, 'id' | 'kind' | 'readWindow' | 'reread'>;

/**
 * A window the backfill could not read is not lost (contract 12a): at every start and every `sla.backfill_retry` (and
 * on `sla backfill --retry`) each window it gave up is read again, once, while it is inside the `sla.backfill` span.
 * A window read at last has its deadlines decided from the service's history around it (the rules' windows and
 * closes either side), and the occurrences still `no_data` are replaced by them — an SLA history event
 * (`backfilled`) says how many; a window that fails again waits for the next round.
 */
export async function retryGivenUpWindows(o: BackfillRetryOptions): Promise<BackfillRetryResult> {
  const result: BackfillRetryResult = { windows: 0, read: 0, failing: 0, dropped: 0, replaced: 0 };
  const windows = [...(await o.store.spool.windows(GIVEN_UP_WINDOWS)).values()].sort((a, b) => a.start - b.start);
  result.windows = windows.length;
  if (windows.length === 0) return result;
  const now = o.clock.now();
  const horizon = now - o.config.sla.backfill;
  const streams = new Map<string, ReplayStream>();
  for (const source of o.config.sources) for (const s of o.replayPoller(source).streams) if (RESULT_OF[s.kind] === 'success') streams.set(s.id, s);
  const readAtLast: SpooledWindow[] = [];
  for (const w of windows) {
    const stream = streams.get(w.stream);
    if (stream === undefined || w.end < horizon) {
      await o.store.spool.forget(GIVEN_UP_WINDOWS, w.stream, w.start);
      result.dropped++;
      o.logger.warn(
        { stream: w.stream, start: new Date(w.start).toISOString(), end: new Date(w.end).toISOString() },
        stream === undefined ? 'SLA backfill: a window given up is of a source no longer configured: not read again' : 'SLA backfill: a window given up is older than sla.backfill now: not read again; its deadlines stay no_data',
      );
      continue;
    }
    try {
      await stream.readWindow({ start: w.start, end: w.end });
      readAtLast.push(w);
    } catch (err) {
      result.failing++;
      await o.store.spool.saveFailure(GIVEN_UP_WINDOWS, w.stream, w, errorMessageWithCode(err), w.attempts + 1, now);
    }
  }
  if (readAtLast.length > 0) {
    const judged = await judgeAround(o, readAtLast, now);
    if (judged === undefined) {
      result.failing += readAtLast.length;
    } else {
      result.replaced = judged.length === 0 ? 0 : await o.store.ledger.replaceNoData(judged, { at: now, reason: `${readAtLast.length} source window(s) the backfill had given up were read` });
      for (const w of readAtLast) await o.store.spool.forget(GIVEN_UP_WINDOWS, w.stream, w.start);
      result.read = readAtLast.length;
    }
  }
  o.logger.info({ ...result }, result.read > 0 ? 'SLA backfill: windows given up were read again; their deadlines are decided' : 'SLA backfill: windows given up were tried again');
  return result;
}

/**
 * The final occurrences of every deadline whose window touches one of `windows`, judged on the service's history
 * re-read around them (each window widened by the rules' reach); undefined when that history cannot be read now.
 */
async function judgeAround(o: BackfillRetryOptions, windows: readonly SpooledWindow[], now: number): Promise<OccurrenceRecord[] | undefined> {
  const rules = o.rules.filter((r) => r.type === 'missing_file');
  if (rules.length === 0) return [];
  const engineOf = (): RuleEngine => ledgerEngine(rules, o);
  const reach = engineOf().rulesReach();
  // Windows close together are judged on one read.
  const spans: Array<{ start: number; end: number }> = [];
  for (const w of windows) {
    const last = spans[spans.length - 1];
    if (last && w.start - reach <= last.end + reach) last.end = Math.max(last.end, w.end);
    else spans.push({ start: w.start, end: w.end });
  }
  const out: OccurrenceRecord[] = [];
  for (const span of spans) {
    const engine = engineOf();
    const from = span.start - reach;
    const until = Math.min(now, span.end + reach);
    try {
      await rereadSuccesses(o, engine, from, until);
    } catch (err) {
      o.logger.warn({ err: errorFields(err), from: new Date(from).toISOString(), until: new Date(until).toISOString() }, 'SLA backfill: the history around windows given up could not be read; tried again at the next round');
      return undefined;
    }
    for (const { occurrences } of engine.occurrencesBetween(span.start, Math.min(until, span.end + reach), { from, until })) {
      for (const occ of occurrences) if (occ.final) out.push(occ);
    }
  }
  return out;
}
