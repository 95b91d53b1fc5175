import { z } from 'zod';
import { duration } from '../base/schema-helpers.js';

/**
 * `flows:` (contract section 13, an extension): how the per-flow daily summary starts. By default it is filled by the
 * SLA backfill's read (`sla.backfill`), so the service is read once for both; `backfill` gives it a span of its own
 * (a read of its own when the two differ, e.g. flows learned from 60 days while the ledger starts empty).
 */
export const flowsSchema = z
  .strictObject({
    backfill: duration()
      .refine((ms) => ms <= 400 * 86_400_000, 'backfill is at most 400d (the default retention)')
      .optional(),
  })
  .prefault({});
export type FlowsConfig = z.output<typeof flowsSchema>;
