/**
 * What the HTTP server needs from the daemon. Structural, so the server can be started in tests with
 * plain objects and does not depend on the daemon's modules.
 */

import type { StatusPageData } from './status-page/status-page-data.js';

/**
 * Silences as the notify stage manages them. The real type lives in src/notify/; the server only needs
 * this shape: silences are JSON-serialisable objects.
 */
export interface SilenceApi {
  list(): unknown[];
  get(id: string): unknown;
  /** Validates `input` (the request body); throws an error with code `silence_invalid` when it is wrong. */
  create(input: unknown): Promise<unknown>;
  /** False when no such silence exists. */
  expire(id: string): Promise<boolean>;
}

export interface DaemonApi {
  /** True once config and state are loaded, false while starting or shutting down. */
  ready(): boolean;
  /** Active alerts: `{labels, annotations, state, activeAt, fingerprint}` each. */
  alerts(): unknown[];
  /** Per source and stream: cursor, last successful poll, up, last error. */
  status(): unknown;
  /** Reload config and rules; keeps the last good ones on error. */
  reload(): Promise<{ ok: boolean; error?: string }>;
  silences: SilenceApi;
  /** What the on-call status page at `/` shows; without it `/` is a plain index of the endpoints. */
  statusPage?(): StatusPageData;
}

/** What `/metrics` serves (TransferWatchMetrics fits). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}
