import { hostname } from 'node:os';
import { z } from 'zod';
import { duration, name } from '../base/schema-helpers.js';

/**
 * `ha:` (contract section 9): run several replicas on one shared Redis. Absent, nothing changes: one process
 * with its state in `state.dir`. `url` and `password` are secrets (each also takes a `*_file` form).
 */
export const haSchema = z
  .strictObject({
    redis: z.strictObject({
      /** `redis://[user:password@]host:port/db` or `rediss://` (TLS). */
      url: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }),
      /** AUTH password, when not in the URL. Empty (`${REDIS_PASSWORD:-}` unset) means none. */
      password: z.string().nullable().optional(),
      username: z.string().optional(),
      /** Several deployments may share one Redis: every key starts with this. */
      key_prefix: z.string().default('transfer-watch:'),
      tls: z.strictObject({ ca_file: z.string().default(''), insecure_skip_verify: z.boolean().default(false) }).prefault({}),
    }),
    /** A dead replica's work moves within lease_ttl + poll.interval; leases are renewed every lease_ttl/3. */
    lease_ttl: duration()
      .prefault('15s')
      .refine((ms) => ms >= 1000, 'lease_ttl must be at least 1s'),
    /** Label `replica` and the name shown on the status page; default: the host name. */
    replica_name: name().default(() => hostname().replace(/[^A-Za-z0-9_.-]/g, '_') || 'transfer-watch'),
  })
  .optional();

export type HaConfig = NonNullable<z.output<typeof haSchema>>;

/** Secret fields of `ha:` that take a `*_file` form (paths from the config root). */
export const HA_SECRET_FIELDS: readonly (readonly string[])[] = [
  ['ha', 'redis', 'url'],
  ['ha', 'redis', 'password'],
];
