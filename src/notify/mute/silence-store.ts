import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Labels } from '../../alerts/alert.js';
import type { StateStore } from '../../state/state-store.js';
import { TransferWatchError } from '../../util/errors.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { matchesAll, type Matcher } from '../matcher.js';
import {
  parseSilenceInput,
  silenceState,
  storedSilenceSchema,
  toApiSilence,
  toMatcher,
  type Silence,
  type SilenceApi,
  type StoredSilence,
} from './silence.js';

export const SILENCES_STATE_KEY = 'silences';
/** Expired silences stay listed this long (Alertmanager's default retention), then are forgotten. */
export const SILENCE_RETENTION_MS = 5 * 24 * 3_600_000;
/**
 * Expired silences kept at most (the newest): every change rewrites the whole set, so a script that creates and
 * expires silences in a loop must not make each write carry thousands of dead ones for five days.
 */
export const MAX_EXPIRED_SILENCES = 200;
/** Stored silences that cannot be used any more (a matcher RE2 refuses, an unreadable entry) are kept here. */
export const QUARANTINED_SILENCES_STATE_KEY = 'silences.quarantined';
/** Quarantined silences kept at most (the newest). */
export const MAX_QUARANTINED_SILENCES = 200;

const snapshotSchema = z.object({ version: z.literal(1), silences: z.array(z.unknown()) });

const STATE_ORDER = { active: 0, pending: 1, expired: 2 } as const;

/** A silence refused by a limit (HTTP 413 for size, 429 for count). */
export class SilenceLimitError extends TransferWatchError {
  constructor(code: 'silence_too_large' | 'silence_limit', message: string) {
    super(code, message);
    this.name = 'SilenceLimitError';
  }
}

/** The silences of one daemon, persisted under state key `silences` after every change. */
export class SilenceStore implements SilenceApi {
  private staleSince: number | undefined;
  private readonly silences = new Map<string, { stored: StoredSilence; matchers: Matcher[] }>();

  constructor(
    private readonly clock: Clock,
    private readonly state: StateStore,
    private readonly logger: Logger,
    /** Called after a change, so the notifier can re-evaluate what is silenced. */
    private readonly onChange: () => void = () => undefined,
    private readonly newId: () => string = randomUUID,
    /** Limits against a flood of silences (Alertmanager's --silences.max-silences / max-silence-size-bytes). */
    private readonly limits: { maxSilences: number; maxSizeBytes: number } = { maxSilences: 1_000, maxSizeBytes: 8_192 },
  ) {}

  /** Load the silences from the store, replacing those in memory (also: another replica changed them). */
  async restore(): Promise<void> {
    const raw = await this.state.load(SILENCES_STATE_KEY);
    if (raw === undefined) return;
    const rejected = this.replaceFrom(raw);
    if (rejected.length === 0) return;
    // Written without them once they are kept aside, so the next start does not meet them again.
    if (!(await this.quarantine(rejected))) return;
    await this.persist().catch((err: unknown) => {
      this.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'could not write the silences without the unusable ones');
    });
  }

  /** Replace the silences in memory; returns the stored entries that could not be used, with why. */
  private replaceFrom(raw: unknown): Array<{ item: unknown; reason: string }> {
    const snapshot = snapshotSchema.safeParse(raw);
    if (!snapshot.success) {
      this.logger.error({ key: SILENCES_STATE_KEY }, 'silence state has an unknown shape; starting without silences');
      return [{ item: raw, reason: 'unknown shape of the silence state' }];
    }
    this.silences.clear();
    const rejected: Array<{ item: unknown; reason: string }> = [];
    for (const item of snapshot.data.silences) {
      const parsed = storedSilenceSchema.safeParse(item);
      if (!parsed.success) {
        rejected.push({ item, reason: 'unreadable silence' });
        continue;
      }
      try {
        this.silences.set(parsed.data.id, { stored: parsed.data, matchers: parsed.data.matchers.map(toMatcher) });
      } catch (err) {
        // A pattern the old (backtracking) engine took and RE2 refuses: never matched on again, kept for its author.
        rejected.push({ item, reason: err instanceof Error ? err.message : String(err) });
      }
    }
    return rejected;
  }

  /**
   * Keep stored silences that cannot be used under state key `silences.quarantined`, so they are neither matched
   * on (a pattern that froze the daemon would freeze it again at every start) nor lost. The caller writes the
   * silences without them (`restore`), or already has (`change`: its snapshot is built from the usable ones).
   */
  private async quarantine(rejected: Array<{ item: unknown; reason: string }>): Promise<boolean> {
    if (rejected.length === 0) return true;
    for (const r of rejected) {
      const id = typeof r.item === 'object' && r.item !== null && 'id' in r.item ? String(r.item.id) : undefined;
      this.logger.error({ key: QUARANTINED_SILENCES_STATE_KEY, silence: id, reason: r.reason }, 'a stored silence cannot be used; moved it aside');
    }
    try {
      const before = await this.state.load(QUARANTINED_SILENCES_STATE_KEY).catch(() => undefined);
      const kept = Array.isArray(before) ? before : [];
      const seen = new Set(kept.map((k) => JSON.stringify(k)));
      const added = rejected.map((r) => ({ reason: r.reason, silence: r.item })).filter((k) => !seen.has(JSON.stringify(k)));
      await this.state.save(QUARANTINED_SILENCES_STATE_KEY, [...kept, ...added].slice(-MAX_QUARANTINED_SILENCES));
      return true;
    } catch (err) {
      this.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'could not move unusable silences aside; they stay ignored');
      return false;
    }
  }

  list(): Silence[] {
    const now = this.clock.now();
    this.forgetOld(now);
    return [...this.silences.values()]
      .map((s) => toApiSilence(s.stored, now))
      .sort((a, b) => STATE_ORDER[a.status.state] - STATE_ORDER[b.status.state] || a.endsAt.localeCompare(b.endsAt));
  }

  get(id: string): Silence | undefined {
    const s = this.silences.get(id);
    return s ? toApiSilence(s.stored, this.clock.now()) : undefined;
  }

  async create(input: unknown): Promise<Silence> {
    const now = this.clock.now();
    const size = Buffer.byteLength(JSON.stringify(input) ?? '');
    if (size > this.limits.maxSizeBytes) {
      throw new SilenceLimitError('silence_too_large', `a silence may take at most ${this.limits.maxSizeBytes} bytes (server.max_silence_size_bytes); this one takes ${size}`);
    }
    const parsed = parseSilenceInput(input, now);
    const live = [...this.silences.values()].filter((s) => silenceState(s.stored, now) !== 'expired' && s.stored.id !== parsed.id).length;
    if (live >= this.limits.maxSilences) {
      throw new SilenceLimitError('silence_limit', `${live} silences are active or pending, the most allowed (server.max_silences); expire some first`);
    }
    // Updating an existing silence keeps its id, like Alertmanager; an unknown id gets a new one.
    const id = parsed.id !== undefined && this.silences.has(parsed.id) ? parsed.id : this.newId();
    const stored: StoredSilence = {
      id,
      matchers: parsed.matchers,
      startsAt: parsed.startsAt,
      endsAt: parsed.endsAt,
      createdBy: parsed.createdBy,
      comment: parsed.comment,
      updatedAt: now,
    };
    await this.change((silences) => silences.set(id, { stored, matchers: parsed.matchers.map(toMatcher) }));
    this.logger.info({ silence: id, createdBy: stored.createdBy, endsAt: new Date(stored.endsAt).toISOString() }, 'silence created');
    this.onChange();
    return toApiSilence(stored, now);
  }

  async expire(id: string): Promise<boolean> {
    const s = this.silences.get(id);
    if (!s) return false;
    const now = this.clock.now();
    if (silenceState(s.stored, now) !== 'expired') {
      await this.change((silences) => {
        const current = silences.get(id) ?? s;
        current.stored = { ...current.stored, startsAt: Math.min(current.stored.startsAt, now), endsAt: now, updatedAt: now };
        silences.set(id, current);
      });
      this.logger.info({ silence: id }, 'silence expired');
      this.onChange();
    }
    return true;
  }

  /** Ids of the active silences that match the labels, sorted. */
  silencedBy(labels: Labels): string[] {
    const now = this.clock.now();
    const ids: string[] = [];
    for (const s of this.silences.values()) {
      if (silenceState(s.stored, now) === 'active' && matchesAll(s.matchers, labels)) ids.push(s.stored.id);
    }
    return ids.sort();
  }

  private forgetOld(now: number): void {
    const expired: Array<{ id: string; endsAt: number }> = [];
    for (const [id, s] of this.silences) {
      if (s.stored.endsAt + SILENCE_RETENTION_MS < now) this.silences.delete(id);
      else if (s.stored.endsAt <= now) expired.push({ id, endsAt: s.stored.endsAt });
    }
    if (expired.length <= MAX_EXPIRED_SILENCES) return;
    expired.sort((a, b) => b.endsAt - a.endsAt);
    for (const e of expired.slice(MAX_EXPIRED_SILENCES)) this.silences.delete(e.id);
  }

  /** A write was refused (state dir read-only or full): the silences in memory are newer than the file. */
  get stale(): boolean {
    return this.staleSince !== undefined;
  }

  /** The store lost the silences: write them at the next retry. */
  markStale(): void {
    this.staleSince ??= this.clock.now();
  }

  /** Write the silences again if a write was refused; quiet while the store still refuses. */
  async retryPersist(): Promise<void> {
    if (this.staleSince === undefined) return;
    try {
      if (this.state.update) await this.change(() => undefined);
      else await this.persist();
      this.logger.info('silences written again after a failed write');
    } catch {
      /* still refused: the next tick tries again */
    }
  }

  /**
   * Apply a change and write it. A store shared by several replicas (Redis) applies it to the silences it holds
   * now, atomically, so two replicas adding silences at the same moment both keep theirs.
   */
  private async change(apply: (silences: Map<string, { stored: StoredSilence; matchers: Matcher[] }>) => void): Promise<void> {
    if (!this.state.update) {
      apply(this.silences);
      await this.persist();
      return;
    }
    const rejected: Array<{ item: unknown; reason: string }> = [];
    const next = await this.state.update(SILENCES_STATE_KEY, (raw) => {
      if (raw !== undefined) rejected.push(...this.replaceFrom(raw));
      apply(this.silences);
      this.forgetOld(this.clock.now());
      return this.snapshot();
    });
    this.replaceFrom(next);
    this.staleSince = undefined;
    await this.quarantine(rejected);
  }

  private snapshot(): unknown {
    return { version: 1, silences: [...this.silences.values()].map((s) => s.stored) };
  }

  private async persist(): Promise<void> {
    this.forgetOld(this.clock.now());
    try {
      await this.state.save(SILENCES_STATE_KEY, this.snapshot());
      this.staleSince = undefined;
    } catch (err) {
      this.staleSince ??= this.clock.now();
      throw err;
    }
  }
}
