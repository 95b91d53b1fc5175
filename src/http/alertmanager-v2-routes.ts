import type { IncomingMessage } from 'node:http';
import type { AlertmanagerAlertQuery, AlertmanagerView, SilenceApi } from './daemon-api.js';
import { HttpError } from './http-error.js';
import { readJsonBody } from './read-body.js';
import { silenceHttpError } from './silence-errors.js';
import { authenticatedUser } from './security/http-security.js';

/** A route of the daemon's server: path (`:name` captures a segment) and a handler per method. */
export interface V2Route {
  path: string;
  get?: (req: IncomingMessage, params: Record<string, string>) => Promise<unknown>;
  post?: (req: IncomingMessage, params: Record<string, string>) => Promise<unknown>;
  delete?: (req: IncomingMessage, params: Record<string, string>) => Promise<unknown>;
}

/**
 * Alertmanager's API v2 (the subset amtool and Grafana's Alertmanager data source use): status, alerts,
 * alert groups and silences. Answers are JSON in Alertmanager's shapes; a bad `filter` matcher or boolean is
 * a 400 naming it, as in Alertmanager.
 */
export function alertmanagerV2Routes(view: AlertmanagerView, silences: SilenceApi): V2Route[] {
  return [
    { path: '/api/v2/status', get: async () => view.status() },
    { path: '/api/v2/receivers', get: async () => view.receivers() },
    { path: '/api/v2/alerts', get: async (req) => guarded(() => view.alerts(alertQuery(req, false))) },
    { path: '/api/v2/alerts/groups', get: async (req) => guarded(() => view.alertGroups(alertQuery(req, true))) },
    {
      path: '/api/v2/silences',
      get: async (req) => guarded(() => view.silences(params(req).getAll('filter'))),
      post: async (req) => {
        const input = await readJsonBody(req);
        if (input === undefined) throw new HttpError(400, 'http_empty_body', 'request body is empty; expected a silence as JSON');
        try {
          const user = authenticatedUser(req);
          const silence = await silences.create(user !== undefined && typeof input === 'object' && input !== null ? { ...input, createdBy: user } : input);
          return { silenceID: idOf(silence) };
        } catch (err) {
          throw silenceHttpError(err);
        }
      },
    },
    {
      path: '/api/v2/silence/:id',
      get: async (_req, p) => {
        const silence = silences.get(p['id'] ?? '');
        if (silence === undefined) throw new HttpError(404, 'silence_not_found', 'silence not found');
        return { ...(silence as object), annotations: {} };
      },
      delete: async (_req, p) => {
        if (!(await silences.expire(p['id'] ?? ''))) throw new HttpError(404, 'silence_not_found', 'silence not found');
        return undefined;
      },
    },
  ];
}

function params(req: IncomingMessage): URLSearchParams {
  return new URL(req.url ?? '/', 'http://localhost').searchParams;
}

function bool(q: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = q.get(name);
  if (v === null || v === '') return fallback;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new HttpError(400, 'http_bad_query', `${name}: must be true or false, got ${JSON.stringify(v)}`);
}

function alertQuery(req: IncomingMessage, groups: boolean): AlertmanagerAlertQuery {
  const q = params(req);
  const receiver = q.get('receiver') ?? undefined;
  return {
    active: bool(q, 'active', true),
    silenced: bool(q, 'silenced', true),
    inhibited: bool(q, 'inhibited', true),
    ...(groups ? { muted: bool(q, 'muted', true) } : {}),
    filter: q.getAll('filter'),
    ...(receiver !== undefined ? { receiver } : {}),
  };
}

/** A bad matcher in `filter` (or a bad receiver regex) is the client's mistake: 400 with the reason. */
function guarded<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (codeOf(err) === 'matcher_invalid') throw new HttpError(400, 'bad_filter', `bad matcher format: ${err instanceof Error ? err.message : String(err)}`);
    throw err;
  }
}

function idOf(silence: unknown): string | undefined {
  return typeof silence === 'object' && silence !== null && 'id' in silence && typeof silence.id === 'string' ? silence.id : undefined;
}

function codeOf(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}
