import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { errorFields, errorMessage, isFencedError, TransferWatchError } from '../util/errors.js';
import type { ServiceRecord, Transfer } from '../source/transfer.js';
import { IDENTITY_VERSION, identityOfVersion } from '../source/record-identity.js';
import type { PollConfig } from './poll-schema.js';
import { nextWindow } from './poll-window.js';
import { SeenTransfers } from '../util/seen-transfers.js';
import { TimedIds } from '../util/timed-ids.js';
import { RESULTS_OF, streamId, type StreamKind } from './stream-kind.js';
import type { TransferPager } from './transfer-pager.js';

/** Reads of one window of a re-read at start before the re-read fails (the client has retried each request). */
const REPLAY_ATTEMPTS = 3;
const REPLAY_RETRY_MS = 2_000;

export interface PollHooks {
  onPoll?(source: string, stream: StreamKind, seconds: number, errorReason?: string): void;
  onRecords?(source: string, stream: StreamKind, unique: number): void;
  onInvalidRecords?(source: string, n: number): void;
  onLag?(source: string, stream: StreamKind, seconds: number): void;
}

/** Receives each transfer once per stream, the first time any window returns it. */
export type TransferSink = (t: Transfer, stream: StreamKind) => void;

export interface StreamSnapshot {
  cursor?: number;
  /** Start of the first window ever read: history is complete from here to the cursor. */
  since?: number;
  lastSuccess?: number;
  /**
   * Ids handed on in the overlap: a SeenSnapshot as saved, or the [id, time] pairs of earlier versions; unknown
   * because it is read from a state file, and SeenTransfers.from parses both forms.
   */
  seen: unknown;
  /**
   * Ids of the unreadable records counted in the overlap, in the same form (absent in state saved before they were
   * kept apart: they were in `seen`, and may be counted once more after the upgrade).
   */
  invalid?: unknown;
  /** The version of the record identity `seen` holds ids of (absent in state saved before there were two: 1). */
  identity?: number;
  /** Ids of another identity version, restored and not yet past the overlap (see `restore`). */
  earlier?: { identity: number; seen: unknown };
}

/** Ids remembered under an earlier version of the record identity, with that version's function. */
interface EarlierSeen {
  identity: number;
  idOf: (record: ServiceRecord) => string;
  seen: SeenTransfers;
}

export interface StreamStatus {
  id: string;
  source: string;
  stream: StreamKind;
  instance: string | undefined;
  cursor: string | null;
  /** The last cycle read its windows whole (false before the first success and after a failed one). */
  up: boolean;
  lastSuccessfulPoll: string | null;
  lastError: { reason: string; message: string; at: string } | null;
  /** After a bad answer: when the window is fetched again (the stream backs off). */
  retryAt: string | null;
  dataLagSeconds: number | null;
}

function reasonOf(err: unknown): string {
  if (err && typeof err === 'object' && 'reason' in err && typeof err.reason === 'string') return err.reason;
  if (err instanceof TransferWatchError) return err.code;
  if (err instanceof Error && err.name === 'AbortError') return 'aborted';
  return 'internal';
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * Reasons that say the service's answer itself was wrong (not that it was unreachable): asking again at once
 * gets the same answer. A never-ending `next` made a daemon fetch the same 1,000 pages every interval, about
 * 4,000 requests in 15 s; after such a failure the stream waits twice as long each time, up to
 * MAX_BACKOFF_MS. Timeouts, network errors and 5xx were already retried with backoff inside the cycle.
 */
const BAD_ANSWER_REASONS = new Set(['too_many_pages', 'pagination_loop', 'bad_next', 'response_too_large', 'invalid_response', 'bad_request']);
export const MAX_BACKOFF_MS = 10 * 60_000;
/** The backoff doubles from at least this, however short the interval: a bad answer does not mend in a second. */
export const MIN_BACKOFF_BASE_MS = 15_000;

/**
 * One query stream of one source (and one instance, when `instances` is set). Reads windows until it has
 * caught up with `now - delay`; a window is committed (cursor moved, snapshot saved) only when all its pages
 * were read. A failed window is abandoned whole: the next cycle fetches it again, and what it had already
 * handed on is recognised by identity and not handed on twice.
 */
export class PollStream {
  readonly id: string;
  cursor: number | undefined;
  since: number | undefined;
  lastSuccess: number | undefined;
  /**
   * True until a cycle has read up to `now - delay`: at the start (the restored cursor may be hours old) and while
   * the windows of a catch-up are still being read. Rules that judge the data's span wait meanwhile: a window read
   * hours behind the clock is not the present ("no transfer in 2h" of a morning not read yet).
   */
  catchingUp = true;
  lastError: { reason: string; message: string; at: number } | undefined;
  /** Cycles in a row whose window was abandoned because of what the service answered. */
  private badAnswers = 0;
  /** Ids of the transfers handed on, by their time (see TimedIds), until the overlap is past them. */
  private seen = new TimedIds();
  /**
   * Ids of the unreadable records counted: kept apart, by the end of the window that fetched them (an unreadable
   * record has no time to key it by, and the next window fetches it again with another end).
   */
  private invalid = new SeenTransfers();
  /** After an upgrade that changed the record identity: what the last overlap handed on, by the old ids. */
  private earlier: EarlierSeen | undefined;

  constructor(
    readonly source: string,
    readonly kind: StreamKind,
    readonly instance: string | undefined,
    private readonly opts: {
      poll: PollConfig;
      tags: string;
      pager: TransferPager;
      clock: Clock;
      logger: Logger;
      sink: TransferSink;
      hooks: PollHooks;
      /** Persist this stream's snapshot; called after each committed window. */
      save: () => Promise<void>;
    },
  ) {
    this.id = streamId(source, kind, instance);
  }

  get intervalMs(): number {
    return this.kind === 'failures' ? this.opts.poll.interval : this.opts.poll.success_interval;
  }

  /** The wait before the next cycle: the interval, doubled after each cycle in a row lost to a bad answer. */
  get nextDelayMs(): number {
    if (this.badAnswers === 0) return this.intervalMs;
    const base = Math.max(this.intervalMs, MIN_BACKOFF_BASE_MS);
    return Math.max(this.intervalMs, Math.min(MAX_BACKOFF_MS, base * 2 ** this.badAnswers));
  }

  snapshot(): StreamSnapshot {
    return {
      ...(this.cursor !== undefined ? { cursor: this.cursor } : {}),
      ...(this.since !== undefined ? { since: this.since } : {}),
      ...(this.lastSuccess !== undefined ? { lastSuccess: this.lastSuccess } : {}),
      identity: IDENTITY_VERSION,
      seen: this.seen.toJSON(),
      invalid: this.invalid.toJSON(),
      ...(this.earlier ? { earlier: { identity: this.earlier.identity, seen: this.earlier.seen.toJSON() } } : {}),
    };
  }

  /**
   * Ids saved under another version of the record identity cannot be compared with this version's: a transfer of
   * the last overlap, fetched again, would get a new id and be handed on twice (counted twice, alerted on twice).
   * So they are kept apart with the function that made them, and a transfer new by this version's id is also
   * looked up by the old one, until the overlap they cover is past. State written by a version this one does not
   * know (a downgrade) is dropped, with a warning: its overlap may be handed on again.
   */
  restore(s: StreamSnapshot): void {
    this.cursor = s.cursor;
    this.since = s.since ?? s.cursor;
    this.catchingUp = true;
    this.lastSuccess = s.lastSuccess;
    const saved = s.identity ?? 1;
    this.seen = saved === IDENTITY_VERSION ? TimedIds.from(s.seen) : new TimedIds();
    // (unreadable records' ids are a hash of their raw JSON, the same in every version)
    this.invalid = SeenTransfers.from(s.invalid);
    this.earlier = undefined;
    const earlier = saved === IDENTITY_VERSION ? s.earlier : { identity: saved, seen: s.seen };
    if (earlier === undefined) return;
    const idOf = identityOfVersion(earlier.identity);
    const seen = SeenTransfers.from(earlier.seen);
    if (idOf) {
      if (seen.size > 0) this.earlier = { identity: earlier.identity, idOf, seen };
    } else if (seen.size > 0) {
      this.opts.logger.warn(
        { stream: this.id, identity: earlier.identity, ids: seen.size },
        'state holds transfer ids of an identity version this one does not know (a newer version?): the transfers of the last overlap may be handed on again',
      );
    }
  }

  /** True the first time a transfer is offered, by this version's id and by an earlier one's still remembered. */
  private isFresh(t: Transfer): boolean {
    if (!this.seen.add(t.id, t.time)) return false;
    return this.earlier === undefined || !this.earlier.seen.has(this.earlier.idOf(t.record));
  }

  private query(start: number, end: number) {
    return {
      start,
      end,
      results: RESULTS_OF[this.kind],
      limit: this.opts.poll.page_size,
      ...(this.instance !== undefined ? { instance: this.instance } : {}),
      ...(this.opts.tags ? { tags: this.opts.tags } : {}),
    };
  }

  /** Read windows until caught up, or until one fails. Returns the number of new transfers handed on. */
  async runCycle(signal?: AbortSignal): Promise<number> {
    const { clock, logger, hooks, poll } = this.opts;
    let total = 0;
    for (;;) {
      if (signal?.aborted) break;
      const window = nextWindow(this.cursor, clock.now(), {
        delay: poll.delay,
        overlap: poll.overlap,
        maxWindow: poll.max_window,
        initialLookback: poll.initial_lookback,
      });
      if (!window) {
        this.catchingUp = false;
        break;
      }
      const started = performance.now();
      let fresh = 0;
      let invalid = 0;
      try {
        for await (const page of this.opts.pager.pages(this.query(window.start, window.end), signal)) {
          // Each bad record once, however often overlapping windows fetch it (as the valid ones).
          if (page.invalidIds) {
            // (an unreadable record's id is a hash of its raw JSON, the same in every version)
            for (const id of page.invalidIds) if (this.invalid.add(id, window.end) && !this.earlier?.seen.has(id)) invalid += 1;
          } else {
            invalid += page.invalid;
          }
          for (const t of page.transfers) {
            if (this.isFresh(t)) {
              fresh += 1;
              this.opts.sink(t, this.kind);
            }
          }
        }
      } catch (err) {
        const reason = reasonOf(err);
        this.lastError = { reason, message: errorMessage(err), at: clock.now() };
        if (BAD_ANSWER_REASONS.has(reason)) this.badAnswers += 1;
        else this.badAnswers = 0;
        hooks.onPoll?.(this.source, this.kind, (performance.now() - started) / 1000, reason);
        if (invalid) hooks.onInvalidRecords?.(this.source, invalid);
        if (fresh) hooks.onRecords?.(this.source, this.kind, fresh);
        logger.warn(
          {
            source: this.source,
            stream: this.id,
            reason,
            window: { start: iso(window.start), end: iso(window.end) },
            retryInSeconds: this.nextDelayMs / 1000,
            err: errorFields(err),
          },
          'poll window abandoned; it will be fetched again',
        );
        total += fresh;
        break;
      }
      hooks.onPoll?.(this.source, this.kind, (performance.now() - started) / 1000);
      if (invalid) hooks.onInvalidRecords?.(this.source, invalid);
      if (fresh) hooks.onRecords?.(this.source, this.kind, fresh);
      total += fresh;
      this.cursor = window.end;
      this.since ??= window.start;
      this.catchingUp = !window.caughtUp;
      this.lastSuccess = clock.now();
      this.lastError = undefined;
      this.badAnswers = 0;
      this.seen.prune(window.end - poll.overlap);
      this.invalid.prune(window.end - poll.overlap);
      this.earlier?.seen.prune(window.end - poll.overlap);
      if (this.earlier?.seen.size === 0) this.earlier = undefined;
      try {
        await this.opts.save();
      } catch (err) {
        // The daemon keeps running on an unwritable state dir; the store reports it loudly and in a metric.
        if (isFencedError(err)) logger.warn({ stream: this.id, err: errorFields(err) }, 'poll window not committed: the source lease is not ours any more');
        else logger.error({ stream: this.id, err: errorFields(err) }, 'could not persist poll cursor');
      }
      if (window.caughtUp) break;
    }
    if (this.cursor !== undefined) hooks.onLag?.(this.source, this.kind, Math.max(0, (clock.now() - this.cursor) / 1000));
    return total;
  }

  /**
   * Re-read history before the cursor so rule windows are rebuilt after a restart. Transfers are passed to
   * `observe` only (not to the sink: metrics counted them in the previous life); those inside the overlap are
   * remembered as seen so the next window does not hand them on again.
   */
  async replay(from: number, observe: (t: Transfer) => void, signal?: AbortSignal): Promise<number> {
    let n = 0;
    for (const window of this.replayWindows(from)) {
      n += await this.replayWindow(window, (t) => {
        if (this.cursor !== undefined && t.time >= this.cursor - this.opts.poll.overlap) this.seen.add(t.id, t.time);
        observe(t);
      }, signal);
    }
    return n;
  }

  /**
   * Every transfer of [from, until] handed to `observe`, window by window, each read again after a failure as a re-read
   * at start is; nothing remembered (`sla rejudge` reads a span of the past with it). Throws the error of a window
   * that failed every attempt.
   */
  async reread(from: number, until: number, observe: (t: Transfer) => void, signal?: AbortSignal): Promise<number> {
    let n = 0;
    for (const window of this.replayWindows(from, until)) n += await this.replayWindow(window, observe, signal);
    return n;
  }

  /**
   * A window of a re-read, page by page (a window of a dense service is too large to hold whole), read again after a
   * failure (REPLAY_ATTEMPTS in all, REPLAY_RETRY_MS apart, doubling): a restart that meets one 500 would otherwise
   * judge no window that began before it (contract section 11b). A read again hands on only what the failed one did
   * not (by id: only the ids of this window are kept meanwhile).
   */
  private async replayWindow(window: { start: number; end: number }, observe: (t: Transfer) => void, signal?: AbortSignal): Promise<number> {
    const handed = new Set<string>();
    for (let attempt = 1; ; attempt++) {
      try {
        for await (const page of this.opts.pager.pages(this.query(window.start, window.end), signal)) {
          for (const t of page.transfers) {
            if (attempt > 1 && handed.has(t.id)) continue;
            handed.add(t.id);
            observe(t);
          }
        }
        return handed.size;
      } catch (err) {
        if (attempt >= REPLAY_ATTEMPTS || signal?.aborted) throw err;
        const waitMs = REPLAY_RETRY_MS * 2 ** (attempt - 1);
        this.opts.logger.warn({ stream: this.id, start: new Date(window.start).toISOString(), end: new Date(window.end).toISOString(), attempt, retry_in_seconds: waitMs / 1000, err: errorFields(err) }, 'a window of the history re-read at start failed; reading it again');
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }

  /**
   * The windows a re-read of the history from `from` to `until` (default: the cursor) asks for, oldest first, each
   * at most `poll.max_window` long; none without a cursor. The SLA backfill reads and keeps them one by one.
   */
  replayWindows(from: number, until = this.cursor): Array<{ start: number; end: number }> {
    if (until === undefined || from >= until) return [];
    const step = this.opts.poll.max_window;
    const windows: Array<{ start: number; end: number }> = [];
    for (let start = from; start < until; start += step + 1) windows.push({ start, end: Math.min(until, start + step) });
    return windows;
  }

  /** Every transfer of one window, every page of it read (or the error that stopped it). */
  async readWindow(window: { start: number; end: number }, signal?: AbortSignal): Promise<Transfer[]> {
    const transfers: Transfer[] = [];
    for await (const page of this.opts.pager.pages(this.query(window.start, window.end), signal)) for (const t of page.transfers) transfers.push(t);
    return transfers;
  }

  status(now: number): StreamStatus {
    return {
      id: this.id,
      source: this.source,
      stream: this.kind,
      instance: this.instance,
      cursor: iso(this.cursor),
      up: this.lastError === undefined && this.lastSuccess !== undefined,
      lastSuccessfulPoll: iso(this.lastSuccess),
      lastError: this.lastError ? { reason: this.lastError.reason, message: this.lastError.message, at: new Date(this.lastError.at).toISOString() } : null,
      retryAt: this.lastError && this.badAnswers > 0 ? iso(this.lastError.at + this.nextDelayMs) : null,
      dataLagSeconds: this.cursor === undefined ? null : Math.max(0, (now - this.cursor) / 1000),
    };
  }
}
