import { z } from 'zod';
import { duration } from '../base/schema-helpers.js';

/** `sla:` (contract section 11): how the ledger of expected files starts. */
export const slaSchema = z
  .strictObject({
    /**
     * A first start, or a missing_file rule added later, fills the ledger from this much of the service's history
     * (0: the ledger starts with the deadlines the daemon sees).
     */
    backfill: duration()
      .prefault('0')
      .refine((ms) => ms <= 400 * 86_400_000, 'backfill is at most 400d (the default retention)'),
  })
  .prefault({});
export type SlaConfig = z.output<typeof slaSchema>;
