import { z } from 'zod';
import { alertEventSchema } from '../alerts/alert-event.js';
import { occurrenceSchema } from '../sla/occurrence.js';
import { flowDaySchema } from '../flows/flow-day-record.js';

export { occurrenceSchema, type OccurrenceRecord } from '../sla/occurrence.js';

export { ALERT_EVENTS, alertEventSchema, type AlertEventKind, type AlertEventRecord } from '../alerts/alert-event.js';

/**
 * What the history keeps (contract section 12), as recorded by the replica that decides. Every record has an
 * id that is the same however often it is recorded (a restart, a leader change, a write retried after the
 * database came back), so the database keeps each one once.
 */

export const ATTEMPT_OUTCOMES = ['sent', 'failed', 'retrying', 'gave_up'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const SILENCE_EVENTS = ['created', 'updated', 'expired'] as const;
export type SilenceEventKind = (typeof SILENCE_EVENTS)[number];

const labels = z.record(z.string(), z.string());

export const attemptSchema = z.object({
  kind: z.literal('attempt'),
  id: z.string(),
  at: z.number(),
  receiver: z.string(),
  integration: z.string(),
  /** `report`: a scheduled SLA report (`about: sla_report`), which is neither. */
  status: z.enum(['firing', 'resolved', 'report']),
  fingerprints: z.array(z.string()),
  /** The label sets of the alerts it carried (matchers of a query apply to them). */
  alerts: z.array(labels),
  title: z.string(),
  outcome: z.enum(ATTEMPT_OUTCOMES),
  attempt: z.number().int(),
  error: z.string().nullable(),
  duration_ms: z.number(),
  /** What was sent: alerts (a notification) or a scheduled SLA report (contract section 11a). */
  about: z.enum(['alerts', 'sla_report']).optional(),
  /** A report's period, `FROM..TO` (local dates). */
  period: z.string().nullable().optional(),
});
export type AttemptRecord = z.infer<typeof attemptSchema>;

export const silenceEventSchema = z.object({
  kind: z.literal('silence'),
  id: z.string(),
  at: z.number(),
  event: z.enum(SILENCE_EVENTS),
  silence_id: z.string(),
  matchers: z.array(z.object({ name: z.string(), value: z.string(), isRegex: z.boolean(), isEqual: z.boolean() })),
  created_by: z.string(),
  comment: z.string(),
  starts_at: z.number(),
  ends_at: z.number(),
});
export type SilenceEventRecord = z.infer<typeof silenceEventSchema>;

export { flowDaySchema, type FlowDayRecord } from '../flows/flow-day-record.js';

export const historyRecordSchema = z.discriminatedUnion('kind', [alertEventSchema, attemptSchema, silenceEventSchema, occurrenceSchema, flowDaySchema]);
export type HistoryRecord = z.infer<typeof historyRecordSchema>;
