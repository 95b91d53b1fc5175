import { z } from 'zod';
import { duration } from '../base/schema-helpers.js';

/** How sources are polled (`poll:`): this stage's slice of the configuration. */
export const pollSchema = z
  .strictObject({
    interval: duration().prefault('30s'),
    success_interval: duration().prefault('60s'),
    delay: duration().prefault('30s'),
    overlap: duration().prefault('2m'),
    page_size: z.number().int().min(1).max(1000).default(1000),
    initial_lookback: duration().prefault('1h'),
    max_window: duration().prefault('1h'),
    stale_after: duration().prefault('5m'),
  })
  .prefault({})
  .refine((p) => p.interval > 0, { message: 'poll.interval must be greater than 0', path: ['interval'] })
  .refine((p) => p.max_window > 0, { message: 'poll.max_window must be greater than 0', path: ['max_window'] });

export type PollConfig = z.output<typeof pollSchema>;
