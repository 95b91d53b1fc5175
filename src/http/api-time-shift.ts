import type { AlertmanagerView, SilenceApi } from './daemon-api.js';

/** The time fields of a silence (startsAt, endsAt, updatedAt). */
const TIME_FIELDS = new Set(['startsAt', 'endsAt', 'updatedAt']);

/**
 * Silences' times between the daemon's clock and its API clients' wall clock, for a daemon whose clock runs
 * `offsetMs` ahead of the wall (the demo lives in a simulated business morning).
 *
 * Only silences: amtool computes a new silence's `startsAt`/`endsAt` from the wall clock, and decides by its own
 * wall clock whether a silence it reads is expired (`amtool silence query` hides one whose `endsAt` it thinks
 * past, and lists an expired one whose `endsAt` is ahead of it). Without the translation the demo refused
 * `amtool silence add`, or amtool listed an active silence as gone. Everything else the daemon answers — alerts'
 * `activeAt`/`startsAt`, status, history, pages — is on its one clock, as the pages show it. With an offset of 0
 * (every real deployment) everything passes through untouched.
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

  /** Alertmanager's API v2 view with wall-clock times in its silences only (alerts are on the daemon's clock). */
  alertmanagerView(view: AlertmanagerView): AlertmanagerView {
    if (this.offsetMs === 0) return view;
    return {
      status: () => view.status(),
      receivers: () => view.receivers(),
      alerts: (q) => view.alerts(q),
      alertGroups: (q) => view.alertGroups(q),
      silences: (filter) => view.silences(filter).map((s) => this.out(s)),
    };
  }

  /** A silence with its time fields moved from the daemon's clock to the wall clock. */
  out<T>(value: T): T {
    return this.offsetMs === 0 ? value : (shift(value, -this.offsetMs) as T);
  }

  /** A client's silence with its time fields moved from the wall clock to the daemon's. */
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
