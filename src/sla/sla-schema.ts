import { z } from 'zod';
import { Cron } from 'croner';
import { duration, timeZone } from '../base/schema-helpers.js';

/** The periods a scheduled report covers, read in its time zone at the time it runs. */
export const REPORT_PERIODS = ['previous_month', 'current_month', 'previous_week', 'previous_day'] as const;

const reportSchema = z.strictObject({
  cron: z.string().superRefine((pattern, ctx) => {
    try {
      new Cron(pattern, { paused: true });
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid cron expression: ${err instanceof Error ? err.message : String(err)}` });
    }
  }),
  timezone: timeZone().default('UTC'),
  period: z.enum(REPORT_PERIODS).default('previous_month'),
  /** A receiver with email (the table, and the CSV attached), slack (the table) or webhook (JSON rows). */
  receiver: z.string().min(1),
  /** Only this rule (default: every missing_file rule). */
  rule: z.string().min(1).optional(),
});
export type SlaReportSchedule = z.output<typeof reportSchema>;

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
    /**
     * How often the source windows a backfill gave up on are read again (contract 12a; they are also at every start),
     * while they are inside the `backfill` span: when one is read, its deadlines are decided and no_data goes away.
     */
    backfill_retry: duration()
      .prefault('6h')
      .refine((ms) => ms >= 60_000, 'backfill_retry is at least 1m'),
    /** Reports sent on a schedule (contract section 11), each period once, by the leader. */
    reports: z.array(reportSchema).default([]),
  })
  .prefault({});
export type SlaConfig = z.output<typeof slaSchema>;
