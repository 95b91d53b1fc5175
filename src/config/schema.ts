import { z } from 'zod';
import { timeZone } from '../base/schema-helpers.js';
import { haSchema } from '../ha/ha-schema.js';
import { historySchema } from '../history/history-schema.js';
import { calendarsSchema } from '../sla/business-calendar.js';
import { slaSchema } from '../sla/sla-schema.js';
import { flowsSchema } from '../flows/flows-schema.js';
import { pollSchema, type PollConfig } from '../poller/poll-schema.js';
import { sourceSchema, type SourceConfig } from '../source/source-schema.js';
import { receiverSchema } from '../notify/receiver-schema.js';
import { inhibitRuleSchema, muteTimeIntervalSchema, routeSchema } from '../notify/dispatch/route-schema.js';

/**
 * The configuration file (contract section 2). This schema is the single source of both the TypeScript
 * types and the validation; `schemas/config.schema.json` is generated from it.
 * Durations are parsed to milliseconds. Secret fields also accept `<field>_file`, resolved by the loader.
 */

export const configSchema = z
  .strictObject({
    sources: z.array(sourceSchema).min(1),
    poll: pollSchema,
    state: z.strictObject({ dir: z.string().min(1).default('./data') }).prefault({}),
    rule_files: z.array(z.string().min(1)).default([]),
    receivers: z.array(receiverSchema).default([]),
    route: routeSchema.optional(),
    inhibit_rules: z.array(inhibitRuleSchema).default([]),
    mute_time_intervals: z.array(muteTimeIntervalSchema).default([]),
    /** Files of user templates (Handlebars) for notifications. */
    templates: z.array(z.string()).default([]),
    /** Time zone in which times are shown to people; always named next to the time. */
    display_timezone: timeZone().default('UTC'),
    server: z
      .strictObject({
        listen: z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]*):\d{1,5}$/, 'must be HOST:PORT').default('0.0.0.0:9464'),
        /** The URL people reach the daemon at; used in links (Alertmanager `generatorURL`, messages). */
        external_url: z.url().optional(),
        /**
         * Prometheus exporter-toolkit web config (TLS, basic auth users with bcrypt hashes, headers). Without
         * one, writes are accepted from loopback only (contract section 10, docs/security.md).
         */
        web_config_file: z.string().min(1).optional(),
        /** More host names the status page and writes may be reached by (DNS rebinding defence), e.g. an ingress host. */
        allowed_hosts: z.array(z.string().min(1)).default([]),
        /** Silences kept at most (active and pending); more are refused with 429, as Alertmanager's --silences.max-silences. */
        max_silences: z.number().int().min(1).default(1_000),
        /** Largest silence accepted, in bytes of JSON (Alertmanager's --silences.max-silence-size-bytes). */
        max_silence_size_bytes: z.number().int().min(256).default(8_192),
      })
      .prefault({}),
    log: z
      .strictObject({ level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info') })
      .prefault({}),
    metrics: z
      .strictObject({
        /** Series per metric family above which new label combinations are folded into `other`. */
        max_series: z.number().int().min(10).default(10_000),
      })
      .prefault({}),
    ha: haSchema,
    /** The history of alerts and notifications (contract section 12): SQLite in state.dir, or PostgreSQL. */
    history: historySchema,
    /** Named business calendars (contract section 11): days on which missing_file rules expect nothing. */
    calendars: calendarsSchema,
    /** The SLA ledger's backfill (contract section 11). */
    sla: slaSchema,
    /** The per-flow daily summary's backfill (contract section 13); default: the SLA backfill's. */
    flows: flowsSchema,
  })
  .superRefine((cfg, ctx) => {
    const seen = new Set<string>();
    cfg.sources.forEach((s, i) => {
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', message: `duplicate source name "${s.name}"`, path: ['sources', i, 'name'] });
      seen.add(s.name);
    });
    const receivers = new Set<string>();
    cfg.receivers.forEach((r, i) => {
      if (receivers.has(r.name)) ctx.addIssue({ code: 'custom', message: `duplicate receiver name "${r.name}"`, path: ['receivers', i, 'name'] });
      receivers.add(r.name);
    });
    cfg.sla.reports.forEach((report, i) => {
      const receiver = cfg.receivers.find((r) => r.name === report.receiver);
      if (!receiver) {
        ctx.addIssue({ code: 'custom', message: `unknown receiver "${report.receiver}" (receivers: ${[...receivers].join(', ') || 'none'})`, path: ['sla', 'reports', i, 'receiver'] });
      } else if (!receiver.email && !receiver.slack && !receiver.webhook) {
        ctx.addIssue({ code: 'custom', message: `receiver "${report.receiver}" has no email, slack or webhook section: a report is sent by those`, path: ['sla', 'reports', i, 'receiver'] });
      }
    });
  });

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
export type { PollConfig, SourceConfig };
export { pollSchema, sourceSchema };
