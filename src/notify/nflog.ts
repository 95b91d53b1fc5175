import { z } from 'zod';
import type { StateStore } from '../state/state-store.js';
import type { Logger } from '../util/logger.js';

export const NFLOG_STATE_KEY = 'nflog';

/**
 * What was last delivered (or given up on) for one receiver integration and alert group, as in
 * Alertmanager's nflog: the fingerprints of the firing and resolved alerts of that notification and when.
 * `seq` is the outbox id of that notification, so a restart can tell which outbox entries were already
 * delivered even when the crash came before they were removed from the outbox.
 */
export interface NflogEntry {
  firing: string[];
  resolved: string[];
  sentAt: number;
  seq: number;
}

const entrySchema = z.object({
  firing: z.array(z.string()),
  resolved: z.array(z.string()),
  sentAt: z.number(),
  seq: z.number().int(),
});
const snapshotSchema = z.object({ version: z.literal(1), entries: z.record(z.string(), z.unknown()) });

/** Entries not refreshed for this long are forgotten (Alertmanager keeps 120h). */
export const NFLOG_RETENTION_MS = 5 * 24 * 3_600_000;

/** Key of a receiver integration's log of one group. */
export function nflogKey(receiver: string, integration: string, groupKey: string): string {
  return `${receiver}/${integration}/${groupKey}`;
}

export class NotificationLog {
  private readonly entries = new Map<string, NflogEntry>();

  constructor(
    private readonly state: StateStore,
    private readonly logger: Logger,
  ) {}

  get(key: string): NflogEntry | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: NflogEntry): void {
    this.entries.set(key, entry);
  }

  async restore(): Promise<void> {
    const raw = await this.state.load(NFLOG_STATE_KEY);
    if (raw === undefined) return;
    const snapshot = snapshotSchema.safeParse(raw);
    if (!snapshot.success) {
      this.logger.error({ key: NFLOG_STATE_KEY }, 'notification log has an unknown shape; starting it empty (some notifications may be repeated)');
      return;
    }
    for (const [key, value] of Object.entries(snapshot.data.entries)) {
      const entry = entrySchema.safeParse(value);
      if (entry.success) this.entries.set(key, entry.data);
      else this.logger.warn({ key }, 'skipping an unreadable notification log entry');
    }
  }

  async persist(now: number): Promise<void> {
    for (const [key, entry] of this.entries) {
      if (entry.sentAt + NFLOG_RETENTION_MS < now) this.entries.delete(key);
    }
    await this.state.save(NFLOG_STATE_KEY, { version: 1, entries: Object.fromEntries(this.entries) });
  }
}
