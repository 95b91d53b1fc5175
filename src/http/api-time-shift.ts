import type { SilenceApi } from './daemon-api.js';

/** The time fields of a silence a client sends (startsAt, endsAt). */
const TIME_FIELDS = new Set(['startsAt', 'endsAt']);

/**
 * Reads the times a client sends for a daemon whose clock runs `offsetMs` ahead of the wall (the demo lives in a
 * simulated business morning). amtool and `transfer-watch silence` compute a new silence's `startsAt`/`endsAt`
 * from the wall clock: without the translation the demo refused `amtool silence add` ("endsAt must be ... in the
 * future"), or kept a one-hour silence pending for the hours between the two clocks.
 *
 * Only what comes in is translated. Everything the daemon answers — alerts' `activeAt`/`startsAt`, silences,
 * history, pages, status — is on its one clock, so the times a person reads in amtool, Grafana and on the pages
 * agree. With an offset of 0 (every real deployment) everything passes through untouched.
 */
export class ApiTimeShift {
  constructor(private readonly offsetMs: number) {}

  /** The silences API as clients use it: their times in, the daemon's times out. */
  silenceApi(api: SilenceApi): SilenceApi {
    if (this.offsetMs === 0) return api;
    return {
      list: () => api.list(),
      get: (id) => api.get(id),
      create: async (input) => api.create(this.in(input)),
      expire: (id) => api.expire(id),
    };
  }

  /** A client's JSON value with its silence times moved from the wall clock to the daemon's. */
  in(value: unknown): unknown {
    return this.offsetMs === 0 ? value : shift(value, this.offsetMs);
  }
}

function shift(value: unknown, byMs: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shift(v, byMs));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const ms = TIME_FIELDS.has(key) && typeof v === 'string' ? Date.parse(v) : Number.NaN;
    out[key] = Number.isNaN(ms) ? shift(v, byMs) : new Date(ms + byMs).toISOString();
  }
  return out;
}
