import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Alert } from '../../alerts/alert.js';
import type { StateStore } from '../../state/state-store.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { errorFields } from '../../util/errors.js';
import { matchesAll } from '../matcher.js';
import { toMatcher } from '../mute/silence.js';
import { AckError, parseAckInput, storedAckSchema, toApiAck, type AckMark, type ApiAck, type StoredAck } from './ack.js';

export const ACKS_STATE_KEY = 'acks';
/** Ended acks stay listed (and in what the history records of them) this long, then are forgotten. */
export const ENDED_ACK_RETENTION_MS = 5 * 24 * 3_600_000;
/** Acks kept at most, ended ones dropped first (a script acknowledging in a loop must not grow every write). */
export const MAX_ACKS = 1_000;

const snapshotSchema = z.object({ version: z.literal(1), acks: z.array(z.unknown()) });

/**
 * The acknowledgements of one daemon, or of every replica of a cluster (the shared state store): any replica takes
 * an ack through its API and writes it; the leader, which notifies, reads them (`restore` when told they changed,
 * and at each of its notifier's ticks through `ackOf`). Written whole after each change, as silences are.
 */
export class AckStore {
  private readonly acks = new Map<string, StoredAck>();
  private stale = false;

  constructor(
    private readonly clock: Clock,
    private readonly state: StateStore,
    private readonly logger: Logger,
    /** Called after this process changed the acks (other replicas are told; the notifier re-decides). */
    private readonly onChange: () => void = () => undefined,
    private readonly newId: () => string = randomUUID,
  ) {}

  async restore(): Promise<void> {
    const raw = await this.state.load(ACKS_STATE_KEY);
    if (raw !== undefined) this.replaceFrom(raw);
  }

  private replaceFrom(raw: unknown): void {
    const snapshot = snapshotSchema.safeParse(raw);
    if (!snapshot.success) {
      this.logger.error({ key: ACKS_STATE_KEY }, 'acknowledgement state has an unknown shape; starting without acknowledgements');
      return;
    }
    this.acks.clear();
    for (const item of snapshot.data.acks) {
      const parsed = storedAckSchema.safeParse(item);
      if (parsed.success) this.acks.set(parsed.data.id, parsed.data);
      else this.logger.warn({ key: ACKS_STATE_KEY }, 'skipping an unreadable acknowledgement');
    }
  }

  /** Every ack kept, active first, newest first. */
  list(): ApiAck[] {
    return [...this.acks.values()].sort((a, b) => Number(a.endedAt !== undefined) - Number(b.endedAt !== undefined) || b.at - a.at).map(toApiAck);
  }

  /** The stored acks (the history records their changes). */
  stored(): StoredAck[] {
    return [...this.acks.values()];
  }

  get(id: string): ApiAck | undefined {
    const a = this.acks.get(id);
    return a ? toApiAck(a) : undefined;
  }

  /**
   * Acknowledge the firing alerts the input selects (matchers) or names (fingerprints) among `firing`. Throws AckError:
   * `ack_invalid` for a bad body, `ack_no_alert` when no firing alert is selected (nothing to acknowledge: HTTP 404).
   * Alerts already acknowledged are taken by the new ack (the latest word, as a second engineer taking over).
   */
  async create(input: unknown, firing: readonly Alert[]): Promise<ApiAck> {
    const parsed = parseAckInput(input);
    let selected: Alert[];
    if (parsed.fingerprints) {
      const wanted = new Set(parsed.fingerprints);
      selected = firing.filter((a) => wanted.has(a.fingerprint));
    } else {
      const matchers = parsed.matchers.map(toMatcher);
      selected = firing.filter((a) => matchesAll(matchers, a.labels));
    }
    if (selected.length === 0) throw new AckError('ack_no_alert', 'no firing alert matches: nothing to acknowledge');
    const now = this.clock.now();
    const stored: StoredAck = {
      id: this.newId(),
      fingerprints: [...new Set(selected.map((a) => a.fingerprint))].sort(),
      matchers: parsed.matchers,
      by: parsed.by,
      comment: parsed.comment,
      at: now,
    };
    await this.change((acks) => {
      // An alert is held by one ack: the newest. An older ack left with none of its alerts has ended, taken over.
      const taken = new Set(stored.fingerprints);
      for (const [id, a] of acks) {
        if (a.endedAt !== undefined) continue;
        const left = a.fingerprints.filter((fp) => !taken.has(fp));
        if (left.length === a.fingerprints.length) continue;
        acks.set(id, left.length > 0 ? { ...a, fingerprints: left } : { ...a, endedAt: now, endedBy: stored.by });
      }
      acks.set(stored.id, stored);
    });
    this.logger.info({ ack: stored.id, by: stored.by, alerts: stored.fingerprints.length }, 'alerts acknowledged');
    this.onChange();
    return toApiAck(stored);
  }

  /** Take an ack back (`DELETE /api/v1/acks/ID`): its alerts are notified and escalated again. False: no such ack. */
  async remove(id: string, by: string): Promise<boolean> {
    const a = this.acks.get(id);
    if (!a) return false;
    if (a.endedAt !== undefined) return true;
    const now = this.clock.now();
    await this.change((acks) => {
      const current = acks.get(id);
      if (current && current.endedAt === undefined) acks.set(id, { ...current, endedAt: now, endedBy: by });
    });
    this.logger.info({ ack: id, by }, 'acknowledgement taken back');
    this.onChange();
    return true;
  }

  /**
   * The ack holding this alert, if any: the active one; with `resolved`, also the one that held it when it resolved
   * (not one taken back), so that the resolution names who had it.
   */
  ackOf(fingerprint: string, opts: { resolved?: boolean } = {}): AckMark | undefined {
    let found: StoredAck | undefined;
    for (const a of this.acks.values()) {
      const holds = a.endedAt === undefined && a.fingerprints.includes(fingerprint);
      const held = opts.resolved === true && a.endedBy === undefined && (a.resolved ?? []).includes(fingerprint);
      if ((holds || held) && (!found || a.at > found.at)) found = a;
    }
    return found ? { id: found.id, by: found.by, at: found.at, comment: found.comment } : undefined;
  }

  /**
   * The notifier's word on which alerts fire: an alert that stopped firing leaves its ack (it resolved: if it fires
   * again, that is news), and an ack left with none has ended. Written only when something changed.
   */
  async settle(firing: ReadonlySet<string>): Promise<void> {
    const now = this.clock.now();
    const changed = [...this.acks.values()].some((a) => a.endedAt === undefined && a.fingerprints.some((fp) => !firing.has(fp)));
    if (!changed && !this.stale) return;
    try {
      await this.change((acks) => {
        for (const [id, a] of acks) {
          if (a.endedAt !== undefined) continue;
          const over = a.fingerprints.filter((fp) => !firing.has(fp));
          if (over.length === 0) continue;
          const left = a.fingerprints.filter((fp) => firing.has(fp));
          acks.set(id, { ...a, fingerprints: left, resolved: [...new Set([...(a.resolved ?? []), ...over])], ...(left.length === 0 ? { endedAt: now } : {}) });
        }
      });
      this.stale = false;
    } catch (err) {
      // Kept in memory as they were; tried again at the next tick.
      this.stale = true;
      this.logger.warn({ err: errorFields(err) }, 'cannot write the acknowledgements whose alerts resolved; trying again');
    }
  }

  private forgetOld(acks: Map<string, StoredAck>, now: number): void {
    for (const [id, a] of acks) if (a.endedAt !== undefined && a.endedAt + ENDED_ACK_RETENTION_MS < now) acks.delete(id);
    if (acks.size <= MAX_ACKS) return;
    const ended = [...acks.values()].filter((a) => a.endedAt !== undefined).sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    for (const a of ended.slice(0, acks.size - MAX_ACKS)) acks.delete(a.id);
  }

  /**
   * Apply a change and write it. A store shared by replicas (Redis) applies it to the acks it holds now, atomically,
   * so two replicas acknowledging at the same moment both keep theirs.
   */
  private async change(apply: (acks: Map<string, StoredAck>) => void): Promise<void> {
    const run = (): unknown => {
      apply(this.acks);
      this.forgetOld(this.acks, this.clock.now());
      return { version: 1, acks: [...this.acks.values()] };
    };
    if (!this.state.update) {
      await this.state.save(ACKS_STATE_KEY, run());
      return;
    }
    const next = await this.state.update(ACKS_STATE_KEY, (raw) => {
      if (raw !== undefined) this.replaceFrom(raw);
      return run();
    });
    this.replaceFrom(next);
  }
}
