import { z } from 'zod';

/**
 * A step in an alert's life as the history records it (contract section 12). The alert store journals these with
 * the transitions they describe (see AlertStore); src/history/ writes them to the database.
 */
export const ALERT_EVENTS = ['pending', 'firing', 'resolved', 'silenced', 'unsilenced', 'inhibited', 'uninhibited', 'acknowledged', 'unacknowledged', 'escalated'] as const;
export type AlertEventKind = (typeof ALERT_EVENTS)[number];

const labels = z.record(z.string(), z.string());

export const alertEventSchema = z.object({
  kind: z.literal('alert'),
  id: z.string(),
  at: z.number(),
  event: z.enum(ALERT_EVENTS),
  fingerprint: z.string(),
  labels,
  annotations: labels,
  silence_id: z.string().nullable(),
  inhibited_by: z.string().nullable(),
  /**
   * Contract 14: `acknowledged`/`unacknowledged` carry `{ack_id, by, comment}`, `escalated` `{step, of, receiver,
   * since}` (since: the group's first notification, epoch ms). Absent for the other events.
   */
  detail: z.record(z.string(), z.union([z.string(), z.number()])).nullable().optional(),
});
export type AlertEventRecord = z.infer<typeof alertEventSchema>;

/** The id of an alert event: one alert (fingerprint) does one thing at one time once. */
export function alertEventId(fingerprint: string, event: AlertEventKind, at: number, detail = ''): string {
  return `${fingerprint}:${event}:${at}${detail ? `:${detail}` : ''}`;
}
