import { z } from 'zod';
import type { StateStore } from '../../state/state-store.js';
import type { Logger } from '../../util/logger.js';
import { errorFields } from '../../util/errors.js';

export const ESCALATIONS_STATE_KEY = 'escalations';

/**
 * One firing episode of a group whose route escalates (contract 14): since when its receiver was first told (the
 * clock of every step), and the steps sent. Kept in the state store beside the notification log, so a leader that
 * takes over sends the steps not sent yet and none twice.
 */
export interface EscalationEntry {
  /** When the group's first notification of this episode was queued (epoch ms). */
  since: number;
  /** Indices of the route's `escalate` steps sent. */
  sent: number[];
}

const entrySchema = z.object({ since: z.number(), sent: z.array(z.number().int().min(0)) });
const snapshotSchema = z.object({ version: z.literal(1), entries: z.record(z.string(), z.unknown()) });

/** Episodes of groups; written whole after a change (a few entries: the groups that fire on escalating routes). */
export class EscalationLog {
  private readonly entries = new Map<string, EscalationEntry>();
  private dirty = false;

  constructor(
    private readonly state: StateStore,
    private readonly logger: Logger,
  ) {}

  async restore(): Promise<void> {
    const raw = await this.state.load(ESCALATIONS_STATE_KEY);
    if (raw === undefined) return;
    const snapshot = snapshotSchema.safeParse(raw);
    if (!snapshot.success) {
      this.logger.error({ key: ESCALATIONS_STATE_KEY }, 'escalation state has an unknown shape; escalations start again from the next notification');
      return;
    }
    this.entries.clear();
    for (const [key, value] of Object.entries(snapshot.data.entries)) {
      const entry = entrySchema.safeParse(value);
      if (entry.success) this.entries.set(key, entry.data);
    }
  }

  get(groupKey: string): EscalationEntry | undefined {
    return this.entries.get(groupKey);
  }

  /** A group's first notification of an episode: its steps count from `now`. */
  begin(groupKey: string, now: number): void {
    if (this.entries.has(groupKey)) return;
    this.entries.set(groupKey, { since: now, sent: [] });
    this.dirty = true;
  }

  markSent(groupKey: string, step: number): void {
    const entry = this.entries.get(groupKey);
    if (!entry || entry.sent.includes(step)) return;
    entry.sent.push(step);
    this.dirty = true;
  }

  /** The episode is over (nothing of the group fires): the next firing starts again from its first notification. */
  end(groupKey: string): void {
    if (this.entries.delete(groupKey)) this.dirty = true;
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  /** Write what changed; a refused write is kept and tried again at the next call. */
  async persist(): Promise<void> {
    if (!this.dirty) return;
    try {
      await this.state.save(ESCALATIONS_STATE_KEY, { version: 1, entries: Object.fromEntries(this.entries) });
      this.dirty = false;
    } catch (err) {
      this.logger.warn({ err: errorFields(err) }, 'cannot write the escalation log; trying again at the next tick');
    }
  }
}
