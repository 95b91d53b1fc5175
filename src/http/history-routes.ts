import { ONCALL_GROUPINGS, type OncallGrouping, type OncallRow } from '../history/oncall-report.js';
import type { IncomingMessage } from 'node:http';
import { csvLine } from '../base/csv.js';
import type { AlertEventRecord, AttemptRecord, SilenceEventRecord } from '../history/history-records.js';
import type { HistoryCursor, HistoryPage, HistoryQuery } from '../history/history-store.js';
import { MatcherError, parseMatcher, type Matcher } from '../notify/matcher.js';
import { HttpError } from './http-error.js';

/** What the history endpoints read (HistoryStore fits); undefined `reader`: the history is disabled. */
export interface HistoryReader {
  alertEvents(q: HistoryQuery): Promise<HistoryPage<AlertEventRecord>>;
  attempts(q: HistoryQuery): Promise<HistoryPage<AttemptRecord>>;
  silenceEvents(q: HistoryQuery): Promise<HistoryPage<SilenceEventRecord>>;
  /** MTTA and MTTR by group (contract 14). */
  oncall(q: OncallQuery): Promise<{ rows: OncallRow[]; truncated: boolean }>;
}

export interface OncallQuery {
  from: number;
  to: number;
  by: OncallGrouping;
}

/** The on-call report's span when none is given: the last 30 days. */
export const DEFAULT_ONCALL_SPAN_MS = 30 * 86_400_000;

/**
 * `/api/v1/history/oncall?from&to&by` (contract 14): RFC 3339 times (default: the last 30 days), `by` one of
 * alertname (default), receiver, user. Anything else is a 400 naming the parameter.
 */
/**
 * `from` and `to` of a query: RFC 3339 times with a zone (`to` defaults to now, `from` to `defaultFrom(to)`); a bad one,
 * or a `from` after `to`, is a 400 that names it.
 */
function timeRange(params: URLSearchParams, now: number, defaultFrom: (to: number) => number): { from: number; to: number } {
  const time = (name: 'from' | 'to', fallback: number): number => {
    const raw = params.get(name);
    if (raw === null || raw === '') return fallback;
    const ms = RFC3339.test(raw) ? Date.parse(raw) : NaN;
    if (Number.isNaN(ms)) throw bad(`${name}: "${raw.slice(0, 100)}" is not an RFC 3339 time (e.g. 2026-11-25T08:00:00Z)`);
    return ms;
  };
  const to = time('to', now);
  const from = time('from', defaultFrom(to));
  if (from > to) throw bad(`from (${new Date(from).toISOString()}) is after to (${new Date(to).toISOString()})`);
  return { from, to };
}

export function parseOncallRequest(req: IncomingMessage, now: number): OncallQuery {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  for (const key of new Set(params.keys())) if (!['from', 'to', 'by'].includes(key)) throw bad(`unknown parameter "${key.slice(0, 100)}" (known: from, to, by)`);
  const { from, to } = timeRange(params, now, (to) => to - DEFAULT_ONCALL_SPAN_MS);
  const by = params.get('by') ?? 'alertname';
  if (!(ONCALL_GROUPINGS as readonly string[]).includes(by)) throw bad(`by: "${by.slice(0, 100)}" must be one of ${ONCALL_GROUPINGS.join(', ')}`);
  return { from, to, by: by as OncallGrouping };
}

export const DEFAULT_HISTORY_LIMIT = 100;
export const MAX_HISTORY_LIMIT = 1_000;
const PARAMS = ['filter', 'from', 'to', 'limit', 'cursor', 'format', 'fingerprint'] as const;
/** RFC 3339 with a zone (`Z` or an offset), as the contract asks; a date alone is not a time. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export interface HistoryRequest {
  query: HistoryQuery;
  format: 'json' | 'csv';
}

/**
 * The query string of `/api/v1/history/*` (contract section 12): `filter` (repeatable, Alertmanager matchers),
 * `from`/`to` (RFC 3339, inclusive), `limit` (1–1000), `cursor` (from `next`), `format` (json|csv) and
 * `fingerprint` (one alert). Anything else, or a malformed value, is a 400 that names the parameter.
 */
export function parseHistoryRequest(req: IncomingMessage, now: number): HistoryRequest {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const params = url.searchParams;
  for (const key of new Set(params.keys())) {
    if (!(PARAMS as readonly string[]).includes(key)) throw bad(`unknown parameter "${key}" (known: ${PARAMS.join(', ')})`);
  }
  for (const key of PARAMS) if (key !== 'filter' && params.getAll(key).length > 1) throw bad(`${key}: given more than once`);
  // Text no database takes (PostgreSQL refuses a NUL byte in a string): a bad request, not a database that does not answer.
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  for (const [key, value] of params) if (/[\u0000-\u001f\u007f]/.test(value)) throw bad(`${key}: contains a control character (such as NUL)`);
  const matchers: Matcher[] = params.getAll('filter').map((text, i) => {
    try {
      return parseMatcher(text);
    } catch (err) {
      const where = err instanceof MatcherError ? ` (column ${err.col})` : '';
      throw bad(`filter #${i + 1} ${JSON.stringify(text)}: ${(err as Error).message}${where}`);
    }
  });
  const { from, to } = timeRange(params, now, () => 0);
  const limitText = params.get('limit');
  const limit = limitText === null ? DEFAULT_HISTORY_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '1') || !Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) {
    throw bad(`limit: "${limitText}" must be a whole number from 1 to ${MAX_HISTORY_LIMIT} (more comes with the cursor in "next")`);
  }
  const cursorText = params.get('cursor');
  const cursor = cursorText === null || cursorText === '' ? undefined : decodeCursor(cursorText);
  const format = params.get('format') ?? 'json';
  if (format !== 'json' && format !== 'csv') throw bad(`format: "${format}" must be json or csv`);
  const fingerprint = params.get('fingerprint') ?? undefined;
  if (fingerprint !== undefined && !/^[0-9a-zA-Z_:.-]{1,128}$/.test(fingerprint)) throw bad('fingerprint: not an alert fingerprint');
  return { query: { matchers, from, to, limit, cursor, fingerprint }, format };
}

/** `next` as clients see it: opaque, URL-safe. */
export function encodeCursor(cursor: HistoryCursor | null): string | null {
  return cursor === null ? null : Buffer.from(JSON.stringify([cursor.at, cursor.id]), 'utf8').toString('base64url');
}

export function decodeCursor(text: string): HistoryCursor {
  try {
    if (!/^[A-Za-z0-9_-]{1,2000}$/.test(text)) throw new Error('not base64url');
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string' && /^[\x20-\x7e]{1,200}$/.test(value[1])) {
      return { at: value[0] as number, id: value[1] };
    }
  } catch {
    /* answered below */
  }
  throw bad('cursor: not a cursor this daemon gave (use the "next" of the previous page)');
}

function bad(message: string): HttpError {
  return new HttpError(400, 'history_bad_query', message);
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function alertEventJson(e: AlertEventRecord): Record<string, unknown> {
  return { at: iso(e.at), event: e.event, fingerprint: e.fingerprint, labels: e.labels, annotations: e.annotations, silence_id: e.silence_id, inhibited_by: e.inhibited_by, ...(e.detail ? { detail: e.detail } : {}) };
}

export function attemptJson(a: AttemptRecord): Record<string, unknown> {
  return {
    at: iso(a.at),
    receiver: a.receiver,
    integration: a.integration,
    status: a.status,
    fingerprints: a.fingerprints,
    title: a.title,
    outcome: a.outcome,
    attempt: a.attempt,
    error: a.error,
    duration_ms: Math.round(a.duration_ms),
    kind: a.about ?? 'alerts',
    ...(a.period ? { period: a.period } : {}),
  };
}

export function silenceEventJson(e: SilenceEventRecord): Record<string, unknown> {
  return { at: iso(e.at), event: e.event, silence_id: e.silence_id, matchers: e.matchers, created_by: e.created_by, comment: e.comment, starts_at: iso(e.starts_at), ends_at: iso(e.ends_at) };
}

const labelText = (labels: Record<string, string>): string =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k] ?? ''}`)
    .join(',');

/** CSV of a page: a header row, then one row per record; every text cell neutralised (base/csv.ts). */
export function alertEventsCsv(events: readonly AlertEventRecord[]): string {
  return (
    csvLine(['at', 'event', 'alertname', 'fingerprint', 'labels', 'summary', 'silence_id', 'inhibited_by']) +
    events.map((e) => csvLine([iso(e.at), e.event, e.labels['alertname'] ?? '', e.fingerprint, labelText(e.labels), e.annotations['summary'] ?? '', e.silence_id, e.inhibited_by])).join('')
  );
}

export function attemptsCsv(attempts: readonly AttemptRecord[]): string {
  return (
    csvLine(['at', 'receiver', 'integration', 'status', 'outcome', 'attempt', 'title', 'fingerprints', 'error', 'duration_ms', 'kind', 'period']) +
    attempts.map((a) => csvLine([iso(a.at), a.receiver, a.integration, a.status, a.outcome, a.attempt, a.title, a.fingerprints.join(' '), a.error, Math.round(a.duration_ms), a.about ?? 'alerts', a.period ?? null])).join('')
  );
}

export function silenceEventsCsv(events: readonly SilenceEventRecord[]): string {
  const matchers = (e: SilenceEventRecord): string => e.matchers.map((m) => `${m.name}${m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!='}${JSON.stringify(m.value)}`).join(', ');
  return (
    csvLine(['at', 'event', 'silence_id', 'matchers', 'created_by', 'comment', 'starts_at', 'ends_at']) +
    events.map((e) => csvLine([iso(e.at), e.event, e.silence_id, matchers(e), e.created_by, e.comment, iso(e.starts_at), iso(e.ends_at)])).join('')
  );
}
