import { z } from 'zod';
import { duration } from '../base/schema-helpers.js';

/**
 * `history:` (contract sections 11 and 12): where the history of alerts and notifications (and the SLA ledger)
 * is kept, and for how long. Without `postgres` it is an embedded SQLite file in `state.dir`; with it, a
 * PostgreSQL database that every replica of an HA deployment shares (the leader writes, every replica reads).
 */
export const historySchema = z
  .strictObject({
    /** Records older than this are deleted (hourly, in batches). */
    retention: duration()
      .prefault('400d')
      .refine((ms) => ms >= 3_600_000, 'retention must be at least 1h'),
    /**
     * SQLite only (contract 12a): how often `PRAGMA quick_check` looks at the file on the store's thread (also at every
     * start and after a corruption error). A damaged file is replaced by its newest good backup.
     */
    check_interval: duration()
      .prefault('1h')
      .refine((ms) => ms >= 1_000, 'check_interval must be at least 1s'),
    /** SQLite only: online backups (`VACUUM INTO`) into `state.dir/backups/`, each verified; the newest `keep` kept. */
    backup: z
      .strictObject({
        interval: duration()
          .prefault('6h')
          .refine((ms) => ms >= 1_000, 'interval must be at least 1s'),
        keep: z.number().int().min(1).max(100).default(4),
      })
      .prefault({}),
    /** `false` runs without history (nothing is written, the endpoints answer 503). */
    enabled: z.boolean().default(true),
    postgres: z
      .strictObject({
        /** `postgres://user[:password]@host:port/db`; secret (also `url_file`). */
        url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL'),
        /** The password, when not in the URL; secret (also `password_file`). */
        password: z.string().nullable().optional(),
        /** Connections kept open at most. */
        max_connections: z.number().int().min(1).max(100).default(5),
      })
      .optional(),
  })
  .prefault({});

export type HistoryConfig = z.output<typeof historySchema>;

/** Secret fields of `history:` that take a `*_file` form (paths from the config root). */
export const HISTORY_SECRET_FIELDS: readonly (readonly string[])[] = [
  ['history', 'postgres', 'url'],
  ['history', 'postgres', 'password'],
];
