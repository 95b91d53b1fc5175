import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { LedgerOccurrence, LedgerTally } from '../../history/sla-ledger-store.js';
import type { LedgerLine } from '../../rules/ledger-lines.js';
import type { SlaTally } from '../../sla/sla-report.js';
import { keyFromPairs, keyText } from '../../sla/occurrence.js';
import { localDateIn } from '../../util/format-time.js';
import { reportRows, type SlaSource } from '../sla-routes.js';
import { renderSlaPage, type SlaPageData } from './render-sla-page.js';
import type { PageReply } from './status-page-handler.js';

/** Occurrences read for one month at most (rules × keys × deadlines); beyond, the page says so. */
const MAX_MONTH_OCCURRENCES = 50_000;

/**
 * `GET /sla[?month=YYYY-MM][&key=LABEL=VALUE…]`: the month grid of every rule and key; with `key`, the statement of
 * one partner (the keys holding every given label and value): its lines only, and each of its occurrences with the
 * evidence, to print and hand over.
 */
export async function slaPage(req: IncomingMessage, deps: { sla: () => SlaSource | string; info(): { timezone: string; version: string }; now(): number }): Promise<PageReply> {
  const info = deps.info();
  const today = localDateIn(deps.now(), info.timezone);
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const asked = params.get('month') ?? '';
  const month = /^\d{4}-(0[1-9]|1[0-2])$/.test(asked) ? asked : today.slice(0, 7);
  const [y, m] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const days = Array.from({ length: last }, (_, i) => `${month}-${String(i + 1).padStart(2, '0')}`);
  const data: SlaPageData = { month, days, rows: [], occurrences: [], version: info.version, today, timezone: info.timezone, now: deps.now() };
  const statementKey = parseStatementKey(params.getAll('key'));
  if (typeof statementKey === 'string') data.problem = statementKey;
  else if (statementKey) data.statementKey = statementKey;
  const nonce = randomBytes(16).toString('base64');
  const reply = async (status: number): Promise<PageReply> => ({
    status,
    contentType: 'text/html; charset=utf-8',
    body: await renderSlaPage(data, nonce),
    headers: { 'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'`, 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'same-origin' },
  });
  if (typeof statementKey === 'string') return reply(400);
  const source = deps.sla();
  if (typeof source === 'string') {
    data.problem = `The SLA ledger cannot be read: ${source}.`;
    return reply(503);
  }
  try {
    const range = { from: days[0] ?? '', to: days[days.length - 1] ?? '' };
    data.rows = await reportRows(monthLines(await source.ledger.tally({ ...range, everyKnownKey: true }), source.lines?.()), (r) => source.objective(r), (r) => source.due?.(r, range.from, range.to));
    const occurrences: LedgerOccurrence[] = [];
    for (let offset = 0; offset < MAX_MONTH_OCCURRENCES; offset += 5_000) {
      // The grid's marks need no files; a partner's statement lists them.
      const page = await source.ledger.occurrences({ ...range, limit: 5_000, offset, withoutFiles: data.statementKey === undefined });
      occurrences.push(...page);
      if (page.length < 5_000) break;
    }
    data.occurrences = occurrences;
    data.holidays = source.holidays?.(range.from, range.to) ?? [];
    // The month's excuse events (made in it or a little after, about its dates).
    const events = await source.ledger.excuseEvents({ from: Date.parse(`${range.from}T00:00:00Z`) - 86_400_000, to: deps.now(), limit: 1_000 });
    data.excuseEvents = events.items.filter((e) => e.localDate >= range.from && e.localDate <= range.to);
    if (data.statementKey) {
      // A partner's lines are those whose key holds it, and those of a rule that watches that partner alone by its
      // `match` (a one-partner flow as discover proposes it: no for_each, `match: {user: [BANK1]}`).
      const selects = new Map((source.lines?.() ?? []).map((l) => [l.rule, l.selects]));
      const wanted = keyHolds(data.statementKey);
      const holds = (rule: string, key: Record<string, string>): boolean => wanted({ ...selects.get(rule), ...key });
      data.rows = data.rows.filter((r) => holds(r.rule, r.key));
      data.occurrences = data.occurrences.filter((o) => holds(o.rule, o.key));
      data.excuseEvents = data.excuseEvents.filter((e) => holds(e.rule, e.key));
      const rules = new Set(data.rows.map((r) => r.rule));
      data.holidays = data.holidays.map((c) => ({ ...c, rules: c.rules.filter((r) => rules.has(r)) })).filter((c) => c.rules.length > 0);
    }
  } catch {
    data.problem = 'The history database does not answer; try again later.';
    return reply(503);
  }
  return reply(200);
}

/**
 * The lines of a month's grid: every rule and key with an occurrence in it, and every line the configured rules judge
 * (from the ledger, since when it is judged; a line never judged yet, not monitored) — so the first day of a month,
 * before its first deadline, lists them with their days not due yet. A key the ledger knew but no rule judges now
 * (a rule or partner removed) shows only in months where it has occurrences.
 */
function monthLines(tallies: readonly LedgerTally[], lines: readonly LedgerLine[] | undefined): SlaTally[] {
  const judgedNow = new Set((lines ?? []).map((l) => `${l.rule}\u0000${keyText(l.key)}`));
  const has = (t: LedgerTally): boolean => t.on_time + t.late + t.missing + t.excused + t.no_data > 0;
  const out: SlaTally[] = tallies.filter((t) => has(t) || judgedNow.has(`${t.rule}\u0000${t.keyText}`));
  const known = new Set(tallies.map((t) => `${t.rule}\u0000${t.keyText}`));
  for (const l of lines ?? []) {
    if (known.has(`${l.rule}\u0000${keyText(l.key)}`)) continue;
    out.push({ rule: l.rule, key: l.key, timezone: l.timezone, on_time: 0, late: 0, missing: 0, excused: 0, no_data: 0, latenessSeconds: [], monitoredFrom: null });
  }
  return out.sort((a, b) => a.rule.localeCompare(b.rule) || keyText(a.key).localeCompare(keyText(b.key)));
}

/** `key=LABEL=VALUE` parameters as labels; none: undefined; a malformed one: the reason, for a 400. */
function parseStatementKey(given: readonly string[]): Record<string, string> | string | undefined {
  if (given.length === 0) return undefined;
  const parsed = keyFromPairs(given);
  return 'malformed' in parsed ? `key=${JSON.stringify(parsed.malformed).slice(1, -1)}: expected LABEL=VALUE (e.g. key=user=BANK1).` : parsed.key;
}

/** Whether a rule's key holds every label and value of a statement's key. */
function keyHolds(wanted: Record<string, string>): (key: Record<string, string>) => boolean {
  const pairs = Object.entries(wanted);
  return (key) => pairs.every(([label, value]) => key[label] === value);
}
