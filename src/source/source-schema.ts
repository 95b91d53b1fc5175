import { z } from 'zod';
import { duration, name } from '../base/schema-helpers.js';

/**
 * One transfer history service (`sources[]`): this stage's slice of the configuration. The config loader
 * assembles it with the others; secrets (`password`) also take a `*_file` form there.
 */
const tlsSchema = z
  .strictObject({
    ca_file: z.string().default(''),
    insecure_skip_verify: z.boolean().default(false),
  })
  .prefault({});

export const sourceSchema = z.strictObject({
  name: name(),
  base_url: z.url({ protocol: /^https?$/ }),
  username: z.string().min(1),
  password: z.string(),
  instances: z.array(z.string().min(1)).default([]),
  tags: z.string().default(''),
  timeout: duration().prefault('30s'),
  /** Attempts per request for timeouts, network errors and 5xx (the first try included). */
  retries: z.number().int().min(0).max(10).default(3),
  /**
   * Most records one poll window may have; with `poll.page_size` it bounds the pages of one pagination, so a
   * service whose `next` never ends fails the window (reason `too_many_pages`) instead of polling forever.
   */
  max_records_per_window: z.number().int().min(1000).default(1_000_000),
  /**
   * Largest answer read from the service, in bytes (32 MiB: a full page of 1,000 records is about 0.6 MB, and a
   * page with one 10 MB file name and message is still read, that record counted invalid and the rest used). A
   * larger one is cut off while it arrives (reason `response_too_large`) and its window retried with backoff.
   */
  max_response_bytes: z.number().int().min(65_536).default(32 * 1024 * 1024),
  tls: tlsSchema,
});

export type SourceConfig = z.output<typeof sourceSchema>;
