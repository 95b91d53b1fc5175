import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { csvLine } from '../base/csv.js';
import { ExcuseConflict, type LedgerOccurrence, type RejudgedChange, type SlaLedgerStore } from '../history/sla-ledger-store.js';
import { keyFromPairs, keyText } from '../sla/occurrence.js';
import type { CalendarHolidays } from '../sla/calendar-view.js';
import type { LedgerLine } from '../rules/ledger-lines.js';
import { joinInSlices, jsonWithList } from '../util/in-slices.js';
import { monthsOf, reportCsv, reportRows, type SlaReportRow } from '../sla/sla-report.js';
import { formatRfc3339 } from '../util/format-time.js';

export { reportRow, reportRows, type SlaReportRow } from '../sla/sla-report.js';
import { HttpError } from './http-error.js';
import { readJsonBody } from './read-body.js';
import { decodeCursor, encodeCursor } from './history-routes.js';
import { authenticatedUser } from './security/http-security.js';
import { TransferWatchError } from '../util/errors.js';

/** `sla rejudge` (contract 11c): a span of local dates to re-decide from the service's history. */
export interface RejudgeRequest {
  /** Local dates, both inclusive, in each rule's zone. */
  from: string;
  to: string;
  /** One rule; every missing_file rule without it. */
  rule?: string | undefined;
  by: string;
  reason: string;
}

export interface RejudgeResult {
  from: string;
  to: string;
  rules: string[];
  /** Occurrences judged and written (final ones: closed, the history read past their close). */
  judged: number;
  /** Occurrences of the span still open (their close has not come): left to the live rules. */
  open: number;
  changed: number;
  /** The first CHANGES_LISTED changes. */
  changes: RejudgedChange[];
  transfers: number;
}

/** What the SLA endpoints need: the ledger, and each missing_file rule's objective as configured now. */
export interface SlaSource {
  ledger: SlaLedgerStore;
  objective(rule: string): number | undefined;
  /** The local dates of a rule's due deadlines over [from, to] (coverage), undefined for a rule not configured now. */
  due?(rule: string, from: string, to: string): Promise<string[] | undefined>;
  /** The counted holidays of the rules' calendars between two local dates (the `/sla` page names them). */
  holidays?(from: string, to: string): CalendarHolidays[];
  /** Every rule and key the configured rules judge: a month's grid lists them before their first deadline comes. */
  lines?(): LedgerLine[];
  /** Re-decide a span of the ledger from the service's history (`POST /api/v1/sla/rejudge`, contract 11c). */
  rejudge?(req: RejudgeRequest): Promise<RejudgeResult>;
  /** Read again now the source windows a backfill gave up (`POST /api/v1/sla/backfill/retry`, contract 12a). */
  retryBackfill?(): Promise<{ windows: number; read: number; failing: number; dropped: number; replaced: number }>;
}

const rejudgeBody = z.strictObject({
  from: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD'),
  to: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD'),
  rule: z.string().min(1).optional(),
  reason: z.string().trim().max(2_000).default(''),
  /** Who asks, without authentication (an authenticated user is always the one recorded). */
  by: z.string().max(200).optional(),
});

/** A span re-judged at once at most (a longer one is asked for in parts). */
const MAX_REJUDGE_DAYS = 400;

/** A re-judgement's failure as the client's answer: what was asked wrong, what runs already, what could not be read. */
function rejudgeError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof TransferWatchError) {
    const status: Record<string, number> = { sla_rule_unknown: 404, sla_rejudge_running: 409, sla_rejudge_future: 400, sla_rejudge_unread: 502 };
    const at = status[err.code];
    if (at !== undefined) return new HttpError(at, err.code, err.message);
  }
  return new HttpError(503, 'sla_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** An RFC 3339 time with a zone (`Z` or an offset). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
/** A report or listing spans at most this many days; longer ones are refused (page by month instead). */
export const MAX_RANGE_DAYS = 800;
const DEFAULT_OCCURRENCES = 1_000;
const MAX_OCCURRENCES = 5_000;

function bad(message: string): HttpError {
  return new HttpError(400, 'sla_bad_query', message);
}

function params(req: IncomingMessage, known: readonly string[], repeatable: readonly string[] = []): URLSearchParams {
  const p = new URL(req.url ?? '/', 'http://localhost').searchParams;
  for (const key of new Set(p.keys())) if (!known.includes(key)) throw bad(`unknown parameter "${key}" (known: ${known.join(', ')})`);
  for (const key of known) if (!repeatable.includes(key) && p.getAll(key).length > 1) throw bad(`${key}: given more than once`);
  // Text no database takes (PostgreSQL refuses a NUL byte in a string): a bad request, not a database that does not answer.
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  for (const [key, value] of p) if (/[\u0000-\u001f\u007f]/.test(value)) throw bad(`${key}: contains a control character (such as NUL)`);
  return p;
}

function dateRange(p: URLSearchParams): { from: string; to: string } {
  const date = (name: 'from' | 'to'): string => {
    const v = p.get(name);
    if (v === null) throw bad(`${name}: required, a local date as YYYY-MM-DD (in each rule's time zone)`);
    if (!DATE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)) || new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) !== v) throw bad(`${name}: "${v}" is not a date as YYYY-MM-DD`);
    return v;
  };
  const from = date('from');
  const to = date('to');
  if (from > to) throw bad(`from (${from}) is after to (${to})`);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
  if (days > MAX_RANGE_DAYS) throw bad(`the range spans ${days} days; at most ${MAX_RANGE_DAYS} (ask for it in parts)`);
  return { from, to };
}

function format(p: URLSearchParams): 'json' | 'csv' {
  const f = p.get('format') ?? 'json';
  if (f !== 'json' && f !== 'csv') throw bad(`format: "${f}" must be json or csv`);
  return f;
}

/** An occurrence in the contract's JSON: times as RFC 3339 with the rule zone's offset. */
export function occurrenceJson(o: LedgerOccurrence): Record<string, unknown> {
  return {
    rule: o.rule,
    key: o.key,
    local_date: o.localDate,
    deadline: formatRfc3339(o.deadline, o.timezone),
    timezone: o.timezone,
    outcome: o.excuse ? 'excused' : o.outcome,
    recorded_outcome: o.outcome,
    final: o.final,
    arrived_at: o.arrivedAt === null ? null : formatRfc3339(o.arrivedAt, o.timezone, { millis: true }),
    lateness_seconds: o.latenessSeconds,
    count: o.count,
    min_count: o.minCount,
    files: o.files.map((f) => ({ file: f.file, arrived_at: formatRfc3339(f.at, o.timezone, { millis: true }), source: f.source })),
    after_close: o.afterClose.map((f) => ({ file: f.file, arrived_at: formatRfc3339(f.at, o.timezone, { millis: true }), source: f.source })),
    excuse: o.excuse ? { by: o.excuse.by, at: new Date(o.excuse.at).toISOString(), reason: o.excuse.reason } : null,
  };
}

export async function occurrencesCsv(list: readonly LedgerOccurrence[]): Promise<string> {
  return (
    csvLine(['rule', 'key', 'local_date', 'deadline', 'outcome', 'arrived_at', 'lateness_seconds', 'count', 'files', 'after_close', 'excused_by', 'excuse_reason']) +
    (await joinInSlices(list, (o) =>
        csvLine([
          o.rule,
          o.keyText,
          o.localDate,
          formatRfc3339(o.deadline, o.timezone),
          o.excuse ? 'excused' : o.outcome,
          o.arrivedAt === null ? null : formatRfc3339(o.arrivedAt, o.timezone, { millis: true }),
          o.latenessSeconds,
          o.count,
          o.files.map((f) => f.file).join(' '),
          // Each file after the close with its arrival: `NAME@2026-11-25T09:00:44.123-03:00`.
          o.afterClose.map((f) => `${f.file}@${formatRfc3339(f.at, o.timezone, { millis: true })}`).join(' '),
          o.excuse?.by ?? null,
          o.excuse?.reason ?? null,
        ]),
    ))
  );
}

const excuseBody = z.strictObject({
  rule: z.string().min(1),
  key: z.record(z.string(), z.string()).default({}),
  local_date: z.string().regex(DATE, 'must be a date as YYYY-MM-DD'),
  /** One deadline of the day (RFC 3339); without it every deadline of the local date is excused. */
  deadline: z.string().regex(RFC3339, 'must be an RFC 3339 time such as 2026-11-25T08:00:00-03:00').optional(),
  reason: z.string().trim().min(1, 'a reason is required').max(2_000),
  /** Who excuses, without authentication (an authenticated user is always the one recorded). */
  by: z.string().max(200).optional(),
});

/** Excuse one deadline of a day: 404 without its occurrence, 409 when it was on time or its day is excused whole. */
async function excuseDeadline(s: SlaSource, b: z.output<typeof excuseBody>, kt: string, deadline: number, by: string, at: number): Promise<unknown> {
  const found = await s.ledger.outcomeAt(b.rule, kt, deadline).catch(() => {
    throw new HttpError(503, 'sla_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
  });
  const what = `the occurrence of rule "${b.rule}"${kt ? ` for ${kt}` : ''} at ${b.deadline ?? ''}`;
  if (!found) throw new HttpError(404, 'sla_occurrence_not_found', `no ${what.slice(4)}`);
  if (found.localDate !== b.local_date) throw bad(`deadline: ${b.deadline ?? ''} is on ${found.localDate}, not on local_date ${b.local_date}`);
  if (found.outcome === 'on_time') throw new HttpError(409, 'sla_occurrence_on_time', `${what} was on time: there is nothing to excuse`);
  try {
    await s.ledger.excuse({ rule: b.rule, keyText: kt, key: b.key, localDate: b.local_date, deadline, by, at, reason: b.reason });
  } catch (err) {
    if (err instanceof ExcuseConflict) throw new HttpError(409, 'sla_day_excused', err.message);
    throw new HttpError(503, 'sla_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
  }
  return { status: 'success', excuse: { rule: b.rule, key: b.key, local_date: b.local_date, deadline: b.deadline, by, at: new Date(at).toISOString(), reason: b.reason } };
}

/** GET report/occurrences, POST/DELETE excuses (contract section 11). */
export function slaHandlers(source: () => SlaSource | string, now: () => number = Date.now) {
  const ledger = (): SlaSource => {
    const s = source();
    if (typeof s === 'string') throw new HttpError(503, 'sla_disabled', `the SLA ledger cannot be read: ${s}`);
    return s;
  };
  const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw new HttpError(503, 'sla_unavailable', 'the history database does not answer; try again later', { 'Retry-After': '10' });
    }
  };
  return {
    report: async (req: IncomingMessage): Promise<{ csv: string } | { json: unknown }> => {
      const p = params(req, ['from', 'to', 'rule', 'format', 'by']);
      const range = dateRange(p);
      const fmt = format(p);
      const by = p.get('by') ?? 'period';
      if (by !== 'period' && by !== 'month') throw bad(`by: "${by}" must be period (a row per rule and key) or month (a row per rule, key and month)`);
      const s = ledger();
      const rule = p.get('rule') ?? undefined;
      const rows: SlaReportRow[] = [];
      // By month: the same tally for each month of the range (at most 27 for the longest range), its rows named.
      for (const part of by === 'month' ? monthsOf(range.from, range.to) : [{ month: undefined, ...range }]) {
        const tallies = await guarded(() => s.ledger.tally({ from: part.from, to: part.to, rule }));
        const partRows = await reportRows(tallies, (r) => s.objective(r), (r) => s.due?.(r, part.from, part.to));
        rows.push(...partRows.map((row) => ({ ...row, period_from: part.from, period_to: part.to, ...(part.month !== undefined ? { month: part.month } : {}) })));
      }
      const createdAt = now();
      return fmt === 'csv'
        ? { csv: reportCsv(rows, { ...range, createdAt }) }
        : { json: { from: range.from, to: range.to, by, created_at: new Date(createdAt).toISOString(), rows } };
    },
    occurrences: async (req: IncomingMessage): Promise<{ csv: string; next: string | null } | { jsonText: string }> => {
      const p = params(req, ['from', 'to', 'rule', 'outcome', 'format', 'limit', 'cursor']);
      const range = dateRange(p);
      const fmt = format(p);
      const outcome = p.get('outcome') ?? undefined;
      if (outcome !== undefined && !['on_time', 'late', 'missing', 'excused', 'no_data'].includes(outcome)) throw bad(`outcome: "${outcome}" must be on_time, late, missing, excused or no_data`);
      const limitText = p.get('limit');
      const limit = limitText === null ? DEFAULT_OCCURRENCES : Number(limitText);
      if (!/^\d+$/.test(limitText ?? '1') || limit < 1 || limit > MAX_OCCURRENCES) throw bad(`limit: must be a whole number from 1 to ${MAX_OCCURRENCES}`);
      const cursorText = p.get('cursor');
      // Strict: Number() would take "", " 12 ", "0x10" and "1e3".
      const offset = cursorText === null ? 0 : /^\d{1,15}$/.test(cursorText) ? Number(cursorText) : Number.NaN;
      if (!Number.isSafeInteger(offset) || offset < 0) throw bad('cursor: not a cursor this daemon gave (use "next")');
      const s = ledger();
      const list = await guarded(() => s.ledger.occurrences({ ...range, rule: p.get('rule') ?? undefined, outcome, limit: limit + 1, offset }));
      const next = list.length > limit ? String(offset + limit) : null;
      const page = list.slice(0, limit);
      // (Formatted and serialised a slice at a time: a page of 5,000 in one go held the event loop 200 ms.)
      return fmt === 'csv' ? { csv: await occurrencesCsv(page), next } : { jsonText: await jsonWithList({ from: range.from, to: range.to }, 'occurrences', page, occurrenceJson, { next }) };
    },
    excuse: async (req: IncomingMessage): Promise<unknown> => {
      const raw = await readJsonBody(req);
      const parsed = excuseBody.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw bad(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'} (expected {"rule","key":{...},"local_date","reason"})`);
      }
      const s = ledger();
      const b = parsed.data;
      const kt = keyText(b.key);
      const by = authenticatedUser(req) ?? b.by ?? 'anonymous';
      if (b.deadline !== undefined) return excuseDeadline(s, b, kt, Date.parse(b.deadline), by, now());
      const outcomes = await guarded(() => s.ledger.outcomesOn(b.rule, kt, b.local_date));
      if (outcomes.length === 0) {
        throw new HttpError(404, 'sla_occurrence_not_found', `no occurrence of rule "${b.rule}"${kt ? ` for ${kt}` : ''} on ${b.local_date}`);
      }
      // A day whose every deadline was met has nothing to excuse: an excuse there would only take met deadlines out
      // of the denominator, and a report handed to a partner would not show it.
      if (outcomes.every((o) => o.outcome === 'on_time')) {
        throw new HttpError(409, 'sla_occurrence_on_time', `the occurrence${outcomes.length > 1 ? 's' : ''} of rule "${b.rule}"${kt ? ` for ${kt}` : ''} on ${b.local_date} ${outcomes.length > 1 ? 'were' : 'was'} on time: there is nothing to excuse`);
      }
      const excuse = { rule: b.rule, keyText: kt, key: b.key, localDate: b.local_date, by, at: now(), reason: b.reason };
      await guarded(() => s.ledger.excuse(excuse));
      // The day's excuse takes only what was not on time (contract 11c); the answer says which it took and which not.
      const deadlines = (met: boolean) => outcomes.filter((o) => (o.outcome === 'on_time') === met).map((o) => ({ deadline: formatRfc3339(o.deadline, o.timezone), outcome: o.outcome }));
      return {
        status: 'success',
        excuse: { rule: excuse.rule, key: b.key, local_date: excuse.localDate, deadline: null, by: excuse.by, at: new Date(excuse.at).toISOString(), reason: excuse.reason },
        excused: deadlines(false),
        not_excused: deadlines(true),
      };
    },
    /** `GET /api/v1/history/sla`: every excuse and withdrawal, newest first (contract section 11a). */
    events: async (req: IncomingMessage): Promise<unknown> => {
      const p = params(req, ['from', 'to', 'rule', 'limit', 'cursor']);
      const time = (name: 'from' | 'to', fallback: number): number => {
        const raw = p.get(name);
        if (raw === null || raw === '') return fallback;
        if (!RFC3339.test(raw)) throw bad(`${name}: "${raw.slice(0, 100)}" is not an RFC 3339 time (e.g. 2026-11-25T08:00:00Z)`);
        return Date.parse(raw);
      };
      const to = time('to', now());
      const from = time('from', 0);
      if (from > to) throw bad('from is after to');
      const limitText = p.get('limit') ?? '100';
      const limit = Number(limitText);
      if (!/^\d+$/.test(limitText) || limit < 1 || limit > 1_000) throw bad('limit: a whole number from 1 to 1000');
      const cursorText = p.get('cursor');
      const cursor = cursorText === null || cursorText === '' ? undefined : decodeCursor(cursorText);
      const s = ledger();
      const page = await guarded(() => s.ledger.excuseEvents({ from, to, rule: p.get('rule') ?? undefined, limit, cursor }));
      return {
        events: page.items.map((e) => ({
          at: new Date(e.at).toISOString(),
          event: e.event,
          rule: e.rule,
          key: e.key,
          local_date: e.localDate,
          deadline: e.deadline === null ? null : new Date(e.deadline).toISOString(),
          by: e.by,
          reason: e.reason,
          ...(e.detail ? { from: e.detail.from, to: e.detail.to, judged: e.detail.judged, changed: e.detail.changed } : {}),
        })),
        next: encodeCursor(page.next),
      };
    },
    /** `POST /api/v1/sla/rejudge`: re-decide a span from the service's history (contract 11c); audited as an event. */
    rejudge: async (req: IncomingMessage): Promise<unknown> => {
      const parsed = rejudgeBody.safeParse(await readJsonBody(req));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw bad(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'} (expected {"from","to"[,"rule","reason"]})`);
      }
      const b = parsed.data;
      const days = (Date.parse(`${b.to}T00:00:00Z`) - Date.parse(`${b.from}T00:00:00Z`)) / 86_400_000;
      if (!Number.isFinite(days)) throw bad('from and to must be real dates');
      if (days < 0) throw bad('from is after to');
      if (days >= MAX_REJUDGE_DAYS) throw bad(`a re-judgement spans at most ${MAX_REJUDGE_DAYS} days; ask for the span in parts`);
      const s = ledger();
      if (!s.rejudge) throw new HttpError(503, 'sla_disabled', 'this daemon cannot re-judge the ledger');
      const run = s.rejudge;
      const by = authenticatedUser(req) ?? b.by ?? 'anonymous';
      const result = await run({ from: b.from, to: b.to, rule: b.rule, by, reason: b.reason }).catch((err: unknown) => {
        throw rejudgeError(err);
      });
      return {
        status: 'success',
        from: result.from,
        to: result.to,
        rules: result.rules,
        by,
        judged: result.judged,
        open: result.open,
        changed: result.changed,
        transfers_read: result.transfers,
        changes: result.changes.map((c) => ({ rule: c.rule, key: c.key, local_date: c.localDate, deadline: formatRfc3339(c.deadline, c.timezone), was: c.was, now: c.now })),
      };
    },
    /** `POST /api/v1/sla/backfill/retry`: the windows a backfill gave up, read again now (contract 12a). */
    retryBackfill: async (): Promise<unknown> => {
      const s = ledger();
      if (!s.retryBackfill) throw new HttpError(503, 'sla_disabled', 'this daemon cannot read the backfill again');
      const run = s.retryBackfill;
      const r = await guarded(() => run());
      return { status: 'success', ...r };
    },
    withdraw: async (req: IncomingMessage): Promise<unknown> => {
      const p = params(req, ['rule', 'local_date', 'key', 'deadline', 'by', 'reason'], ['key']);
      const rule = p.get('rule');
      const date = p.get('local_date');
      if (!rule) throw bad('rule: required');
      if (!date || !DATE.test(date)) throw bad('local_date: required, as YYYY-MM-DD');
      const parsed = keyFromPairs(new URL(req.url ?? '/', 'http://localhost').searchParams.getAll('key'));
      if ('malformed' in parsed) throw bad(`key: "${parsed.malformed}" must be LABEL=VALUE`);
      const { key } = parsed;
      const deadlineText = p.get('deadline');
      if (deadlineText !== null && !RFC3339.test(deadlineText)) throw bad('deadline: must be an RFC 3339 time such as 2026-11-25T08:00:00-03:00');
      const s = ledger();
      // Who withdrew is kept as who excused is: the authenticated user, or the `by` a client without authentication names.
      const withdrawal = {
        rule,
        keyText: keyText(key),
        key,
        localDate: date,
        deadline: deadlineText === null ? undefined : Date.parse(deadlineText),
        by: authenticatedUser(req) ?? p.get('by') ?? 'anonymous',
        at: now(),
        reason: (p.get('reason') ?? '').slice(0, 2_000),
      };
      if (!(await guarded(() => s.ledger.withdraw(withdrawal)))) throw new HttpError(404, 'sla_excuse_not_found', 'no such excuse');
      return { status: 'success' };
    },
  };
}
