import { z } from 'zod';
import { duration, name, timeZone } from '../../base/schema-helpers.js';

/**
 * Alertmanager-style routing tree. Matchers use Alertmanager's syntax (`name="v"`, `!=`, `=~`, `!~`);
 * they are parsed by the notify stage, which reports a bad one with its position.
 * Child routes inherit `receiver`, `group_by` and the intervals from their parent when they omit them.
 */
export interface RouteInput {
  receiver?: string | undefined;
  group_by?: string[] | undefined;
  group_wait?: string | undefined;
  group_interval?: string | undefined;
  repeat_interval?: string | undefined;
  matchers?: string[] | undefined;
  continue?: boolean | undefined;
  mute_time_intervals?: string[] | undefined;
  active_time_intervals?: string[] | undefined;
  escalate?: Array<{ after: string; receiver: string }> | undefined;
  routes?: RouteInput[] | undefined;
}

export interface RouteConfig {
  receiver?: string | undefined;
  group_by?: string[] | undefined;
  group_wait?: number | undefined;
  group_interval?: number | undefined;
  repeat_interval?: number | undefined;
  matchers: string[];
  continue: boolean;
  mute_time_intervals: string[];
  active_time_intervals: string[];
  escalate?: Array<{ after: number; receiver: string }> | undefined;
  routes: RouteConfig[];
}

export const routeSchema: z.ZodType<RouteConfig, RouteInput> = z.strictObject({
  receiver: z.string().optional(),
  group_by: z.array(z.string()).optional(),
  group_wait: duration().optional(),
  group_interval: duration().optional(),
  repeat_interval: duration().optional(),
  matchers: z.array(z.string()).default([]),
  continue: z.boolean().default(false),
  mute_time_intervals: z.array(z.string()).default([]),
  active_time_intervals: z.array(z.string()).default([]),
  /**
   * Contract 14: a firing group not acknowledged `after` its first notification is notified to `receiver` too, once
   * per step. Not inherited (a child route says its own).
   */
  escalate: z
    .array(z.strictObject({ after: duration(), receiver: z.string().min(1) }))
    .max(10)
    .default([])
    .refine((steps) => steps.every((s, i) => i === 0 || s.after > (steps[i - 1]?.after ?? 0)), 'each escalation step must come after the one before it'),
  get routes() {
    return z.array(routeSchema).default([]);
  },
});

export const inhibitRuleSchema = z.strictObject({
  source_matchers: z.array(z.string()).min(1),
  target_matchers: z.array(z.string()).min(1),
  equal: z.array(z.string()).default([]),
});

const clockTime = z.string().regex(/^([01]\d|2[0-4]):[0-5]\d$/, 'must be HH:MM (00:00 to 24:00)');

export const timeIntervalSchema = z.strictObject({
  /** `monday`, `monday:friday`, ... */
  weekdays: z.array(z.string()).optional(),
  times: z.array(z.strictObject({ start_time: clockTime, end_time: clockTime })).optional(),
  /** `1`, `1:5`, `-1` (last day) ... */
  days_of_month: z.array(z.string()).optional(),
  months: z.array(z.string()).optional(),
  years: z.array(z.string()).optional(),
  location: timeZone().default('UTC'),
});

export const muteTimeIntervalSchema = z.strictObject({
  name: name(),
  time_intervals: z.array(timeIntervalSchema).min(1),
});

export type InhibitRuleConfig = z.output<typeof inhibitRuleSchema>;
export type TimeIntervalConfig = z.output<typeof timeIntervalSchema>;
export type MuteTimeIntervalConfig = z.output<typeof muteTimeIntervalSchema>;
