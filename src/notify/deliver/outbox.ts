import { z } from 'zod';
import type { StateStore } from '../../state/state-store.js';
import type { Logger } from '../../util/logger.js';
import type { Notification } from '../notification.js';

export const OUTBOX_STATE_KEY = 'outbox';

/**
 * A notification waiting to be delivered to one integration of one receiver. It carries everything needed
 * to send it after a restart: the rendered notification data and the alert sets it reports.
 * Entries of the same `key` (receiver, integration, group) are delivered in order, oldest first.
 */
export interface OutboxEntry {
  /** Increasing sequence number, never reused (see NflogEntry.seq). */
  id: number;
  /** nflogKey(receiver, integration, groupKey). */
  key: string;
  receiver: string;
  integration: string;
  notification: Notification;
  firing: string[];
  resolved: string[];
  createdAt: number;
  attempts: number;
  nextAttemptAt: number;
  giveUpAt: number;
  lastError?: string | undefined;
}

const labelsSchema = z.record(z.string(), z.string());
const alertSchema = z.object({
  fingerprint: z.string(),
  labels: labelsSchema,
  annotations: labelsSchema,
  state: z.enum(['pending', 'firing', 'resolved']),
  activeAt: z.number(),
  firedAt: z.number().optional(),
  resolvedAt: z.number().optional(),
  values: z.record(z.string(), z.union([z.number(), z.string()])),
  samples: z.array(
    z.object({ time: z.number(), file: z.string(), code: z.number(), message: z.string(), user: z.string(), instance: z.string() }),
  ),
  ack: z.object({ id: z.string(), by: z.string(), at: z.number(), comment: z.string() }).optional(),
});
const notificationSchema = z.object({
  receiver: z.string(),
  groupKey: z.string(),
  status: z.enum(['firing', 'resolved']),
  groupLabels: labelsSchema,
  commonLabels: labelsSchema,
  commonAnnotations: labelsSchema,
  alerts: z.array(alertSchema),
  externalUrl: z.string(),
  displayTimezone: z.string(),
  idempotencyKey: z.string().optional(),
  escalation: z.object({ step: z.number().int(), of: z.number().int(), since: z.number(), receiver: z.string() }).optional(),
  ackUrl: z.string().optional(),
  ackToken: z.string().optional(),
});
const entrySchema = z.object({
  id: z.number().int(),
  key: z.string(),
  receiver: z.string(),
  integration: z.string(),
  notification: notificationSchema,
  firing: z.array(z.string()),
  resolved: z.array(z.string()),
  createdAt: z.number(),
  attempts: z.number().int(),
  nextAttemptAt: z.number(),
  giveUpAt: z.number(),
  lastError: z.string().optional(),
});
const snapshotSchema = z.object({ version: z.literal(1), nextId: z.number().int(), entries: z.array(z.unknown()) });
/** A journal record of the outbox: an attempt of entry `id` began (see `beginAttempt`). */
const begunSchema = z.object({ begun: z.object({ id: z.number().int(), attempt: z.number().int().min(1) }) });

export class Outbox {
  private entries: OutboxEntry[] = [];
  private nextId = 1;

  constructor(
    private readonly state: StateStore,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.entries.length;
  }

  all(): readonly OutboxEntry[] {
    return this.entries;
  }

  add(entry: Omit<OutboxEntry, 'id'>): OutboxEntry {
    const full: OutboxEntry = { ...entry, id: this.nextId++ };
    this.entries.push(full);
    return full;
  }

  remove(id: number): void {
    this.entries = this.entries.filter((e) => e.id !== id);
  }

  /** The newest entry for a key: what that integration will have been told once the queue drains. */
  latestFor(key: string): OutboxEntry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e && e.key === key) return e;
    }
    return undefined;
  }

  /** The oldest entry of each key: only these may be sent, so one group's messages never overtake each other. */
  heads(): OutboxEntry[] {
    const seen = new Set<string>();
    const out: OutboxEntry[] = [];
    for (const e of this.entries) {
      if (seen.has(e.key)) continue;
      seen.add(e.key);
      out.push(e);
    }
    return out;
  }

  /** Drop entries the notification log already records as delivered (a crash between the two writes). */
  dropDelivered(deliveredSeq: (key: string) => number | undefined): number {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.id > (deliveredSeq(e.key) ?? 0));
    return before - this.entries.length;
  }

  async restore(): Promise<void> {
    const raw = await this.state.load(OUTBOX_STATE_KEY);
    if (raw === undefined) return;
    const snapshot = snapshotSchema.safeParse(raw);
    if (!snapshot.success) {
      this.logger.error({ key: OUTBOX_STATE_KEY }, 'outbox state has an unknown shape; pending notifications in it are lost');
      return;
    }
    this.nextId = Math.max(this.nextId, snapshot.data.nextId);
    for (const item of snapshot.data.entries) {
      const entry = entrySchema.safeParse(item);
      if (entry.success) {
        this.entries.push(entry.data);
        this.nextId = Math.max(this.nextId, entry.data.id + 1);
      } else {
        this.logger.error({ key: OUTBOX_STATE_KEY }, 'an outbox entry cannot be read and is lost');
      }
    }
    this.entries.sort((a, b) => a.id - b.id);
    // Attempts that began after the snapshot (a process killed while one was in flight): they count, so the request
    // sent again after the restart is the next attempt, not a second "attempt 1".
    const byId = new Map(this.entries.map((e) => [e.id, e]));
    for (const record of await this.state.journal(OUTBOX_STATE_KEY)) {
      const begun = begunSchema.safeParse(record);
      if (!begun.success) continue;
      const entry = byId.get(begun.data.begun.id);
      if (entry) entry.attempts = Math.max(entry.attempts, begun.data.begun.attempt);
    }
  }

  /**
   * Note that an attempt of `entry` begins (its number: `entry.attempts + 1`), before the request goes out: one cheap
   * journal record, which the next snapshot replaces. Durable enough for a killed process; a refused write only
   * loses the count.
   */
  async beginAttempt(entry: OutboxEntry): Promise<void> {
    await this.state.append(OUTBOX_STATE_KEY, { begun: { id: entry.id, attempt: entry.attempts + 1 } });
  }

  async persist(): Promise<void> {
    // A copy: the store may serialise later, and attempts mutate entries in place.
    const entries = this.entries.map((e) => ({ ...e }));
    await this.state.save(OUTBOX_STATE_KEY, { version: 1, nextId: this.nextId, entries });
  }
}
