import type { AlertmanagerView, SilenceApi } from './daemon-api.js';

/** The time fields of the JSON API: silences (startsAt, endsAt, updatedAt) and alerts (activeAt, startsAt, ...). */
const TIME_FIELDS = new Set(['startsAt', 'endsAt', 'updatedAt', 'activeAt']);

/**
 * Translates times between the daemon's clock and its API clients' wall clock, for a daemon whose clock runs
 * `offsetMs` ahead of the wall (the demo lives in a simulated business morning). amtool, `transfer-watch silence`
 * and scripts compute a silence's `startsAt`/`endsAt` from the wall clock, and read times back against it: without
 * the translation the demo refused `amtool silence add` ("endsAt must be ... in the future") hours from 08:00.
 * With an offset of 0 (every real deployment) everything passes through untouched.
 */
export class ApiTimeShift {
  constructor(private readonly offsetMs: number) {}

  /** The silences API as clients see it: their times in, wall-clock times out. */
  silenceApi(api: SilenceApi): SilenceApi {
    if (this.offsetMs === 0) return api;
    return {
      list: () => api.list().map((s) => this.out(s)),
      get: (id) => {
        const s = api.get(id);
        return s === undefined ? undefined : this.out(s);
      },
      create: async (input) => this.out(await api.create(this.in(input))),
      expire: (id) => api.expire(id),
    };
  }

  /** Alertmanager's API v2 view with wall-clock times in its alerts, groups and silences. */
  alertmanagerView(view: AlertmanagerView): AlertmanagerView {
    if (this.offsetMs === 0) return view;
    return {
      status: () => view.status(),
      receivers: () => view.receivers(),
      alerts: (q) => view.alerts(q).map((a) => this.out(a)),
      alertGroups: (q) => view.alertGroups(q).map((g) => this.out(g)),
      silences: (filter) => view.silences(filter).map((s) => this.out(s)),
    };
  }

  /** A JSON value with every time field moved from the daemon's clock to the wall clock. */
  out<T>(value: T): T {
    return this.offsetMs === 0 ? value : (shift(value, -this.offsetMs) as T);
  }

  /** A client's JSON value with every time field moved from the wall clock to the daemon's. */
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
