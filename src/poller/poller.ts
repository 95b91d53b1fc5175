import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { errorFields, isFencedError } from '../util/errors.js';
import type { PollConfig } from './poll-schema.js';
import type { SourceConfig } from '../source/source-schema.js';
import type { StateStore } from '../state/state-store.js';
import type { Transfer } from '../source/transfer.js';
import { PollStream, type PollHooks, type StreamSnapshot, type StreamStatus, type TransferSink } from './poll-stream.js';
import { RESULT_OF, streamKinds } from './stream-kind.js';
import type { TransferPager } from './transfer-pager.js';

const STATE_KEY = 'cursors';

export interface PollerOptions {
  sources: SourceConfig[];
  poll: PollConfig;
  pagerFor: (source: SourceConfig) => TransferPager;
  clock: Clock;
  logger: Logger;
  state: StateStore;
  sink: TransferSink;
  hooks?: PollHooks;
  /** Called after every cycle of any stream (the daemon evaluates rules then). */
  onCycle?: (stream: PollStream) => void;
  /** Time the process started, so a source is not reported down before it had `stale_after` to answer. */
  startedAt: number;
}

function parseSnapshot(value: unknown): Record<string, StreamSnapshot> {
  const out: Record<string, StreamSnapshot> = {};
  if (!value || typeof value !== 'object') return out;
  for (const [id, raw] of Object.entries(value)) {
    if (!raw || typeof raw !== 'object') continue;
    const r = raw as Record<string, unknown>;
    // Parsed when the stream restores it (SeenTransfers.from): the compact form, or pairs of an older version.
    const seen = r.seen ?? [];
    out[id] = {
      ...(typeof r.cursor === 'number' ? { cursor: r.cursor } : {}),
      ...(typeof r.since === 'number' ? { since: r.since } : {}),
      ...(typeof r.lastSuccess === 'number' ? { lastSuccess: r.lastSuccess } : {}),
      seen,
      ...('invalid' in r ? { invalid: r.invalid } : {}),
      ...(typeof r.identity === 'number' ? { identity: r.identity } : {}),
      ...(isEarlierSeen(r.earlier) ? { earlier: r.earlier } : {}),
    };
  }
  return out;
}

function isEarlierSeen(value: unknown): value is { identity: number; seen: unknown } {
  return typeof value === 'object' && value !== null && 'identity' in value && typeof value.identity === 'number' && 'seen' in value;
}

/**
 * All query streams of all sources. Each stream runs in its own loop (run, wait its interval, run again), so no
 * two runs of a stream overlap and a slow or dead source never delays another.
 */
export class Poller {
  readonly streams: PollStream[];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly abort = new AbortController();
  private stopping = false;

  constructor(private readonly opts: PollerOptions) {
    this.streams = [];
    for (const source of opts.sources) {
      const pager = opts.pagerFor(source);
      const instances: Array<string | undefined> = source.instances.length > 0 ? source.instances : [undefined];
      for (const kind of streamKinds(opts.poll)) {
        for (const instance of instances) {
          this.streams.push(
            new PollStream(source.name, kind, instance, {
              poll: opts.poll,
              tags: source.tags,
              pager,
              clock: opts.clock,
              logger: opts.logger,
              sink: opts.sink,
              hooks: opts.hooks ?? {},
              save: () => this.save(),
            }),
          );
        }
      }
    }
  }

  /** True when some stream has a saved cursor: this is a restart, not a first start. */
  async restore(): Promise<boolean> {
    const snap = parseSnapshot(await this.opts.state.load(STATE_KEY));
    let restored = false;
    for (const s of this.streams) {
      const saved = snap[s.id];
      if (saved) {
        s.restore(saved);
        restored ||= saved.cursor !== undefined;
      }
    }
    return restored;
  }

  /** Snapshot of every stream; the store serialises writes, so the last one saved is the newest. */
  async save(): Promise<void> {
    const snap: Record<string, StreamSnapshot> = {};
    for (const s of this.streams) snap[s.id] = s.snapshot();
    await this.opts.state.save(STATE_KEY, snap);
  }

  /**
   * Rebuild rule windows after a restart: re-read up to `lookback` of history before each stream's cursor.
   * Returns whether every stream's history was read; when not, rules must not judge windows before now.
   */
  async replay(lookback: number, observe: (t: Transfer) => void): Promise<boolean> {
    if (lookback <= 0) return true;
    const now = this.opts.clock.now();
    const results = await Promise.all(
      this.streams.map(async (s) => {
        try {
          const n = await s.replay(now - lookback, observe, this.abort.signal);
          this.opts.logger.info({ stream: s.id, transfers: n }, 'rule windows rebuilt from history');
          return true;
        } catch (err) {
          this.opts.logger.warn({ stream: s.id, err: errorFields(err) }, 'could not re-read history to rebuild rule windows; rules start with what polling brings');
          return false;
        }
      }),
    );
    return results.every(Boolean);
  }

  start(): void {
    for (const s of this.streams) this.loop(s);
  }

  private loop(stream: PollStream): void {
    if (this.stopping) return;
    const run = stream
      .runCycle(this.abort.signal)
      .catch((err: unknown) => this.opts.logger.error({ stream: stream.id, err: errorFields(err) }, 'poll cycle failed'))
      .finally(() => {
        this.inFlight.delete(stream.id);
        try {
          this.opts.onCycle?.(stream);
        } catch (err) {
          this.opts.logger.error({ err: errorFields(err) }, 'post-poll evaluation failed');
        }
        if (!this.stopping) this.timers.set(stream.id, setTimeout(() => this.loop(stream), stream.nextDelayMs));
      });
    this.inFlight.set(stream.id, run);
  }

  /** Finish the cycles in flight (aborting them after `graceMs`), then save; `why` names the occasion in logs. */
  async stop(graceMs: number, why = 'shutting down'): Promise<void> {
    this.stopping = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    const pending = Promise.all(this.inFlight.values());
    const timer = setTimeout(() => this.abort.abort(), graceMs);
    await pending;
    clearTimeout(timer);
    await this.save().catch((err: unknown) => {
      if (isFencedError(err)) this.opts.logger.info({ why, err: errorFields(err) }, 'last poll window not committed: its lease is not ours any more; the next holder reads it again');
      else this.opts.logger.error({ why, err: errorFields(err) }, 'could not save poll cursors');
    });
  }

  /** Epoch ms up to which a source's stream of that result kind has been fully read (min over its instances). */
  completeUntil(source: string, result: 'success' | 'error'): number | undefined {
    let min: number | undefined;
    let any = false;
    for (const s of this.streams) {
      if (s.source !== source || RESULT_OF[s.kind] !== result) continue;
      any = true;
      if (s.cursor === undefined) return undefined;
      min = min === undefined ? s.cursor : Math.min(min, s.cursor);
    }
    return any ? min : undefined;
  }

  /** Epoch ms from which a source's stream of that result kind has been read without gaps (max over its instances). */
  completeFrom(source: string, result: 'success' | 'error'): number | undefined {
    let max: number | undefined;
    for (const s of this.streams) {
      if (s.source !== source || RESULT_OF[s.kind] !== result) continue;
      if (s.since === undefined) return undefined;
      max = max === undefined ? s.since : Math.max(max, s.since);
    }
    return max;
  }

  /** The last time every stream of the source had a successful poll (the stalest stream decides). */
  lastHealthy(source: string): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const s of this.streams) {
      if (s.source !== source) continue;
      oldest = Math.min(oldest, Math.max(s.lastSuccess ?? 0, this.opts.startedAt));
    }
    return Number.isFinite(oldest) ? oldest : this.opts.startedAt;
  }

  status(): StreamStatus[] {
    const now = this.opts.clock.now();
    return this.streams.map((s) => s.status(now));
  }
}
