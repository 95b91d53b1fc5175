import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseDuration } from '../../base/duration.js';
import { parseMatchers, type Matcher } from '../../notify/matcher.js';
import { errorMessage } from '../../util/errors.js';
import type { SilenceEventRecord } from '../../history/history-records.js';
import { decodeCursor, encodeCursor, type HistoryReader } from '../history-routes.js';
import { HISTORY_SINCE_CHOICES, renderHistoryPage, type HistoryPageData } from './render-history-page.js';
import type { PageReply } from './status-page-handler.js';

export interface HistoryPageDeps {
  /** The history, or why there is none. */
  history: HistoryReader | string | undefined;
  /** The display time zone and version, as the status page shows them. */
  info(): { timezone: string; version: string };
  now(): number;
}

/** A timeline shows at most this many events and attempts of one alert (the API pages through more). */
const TIMELINE_LIMIT = 500;
const RESULTS_LIMIT = 100;
const SILENCE_LIMIT = 1_000;

/**
 * The newest silence events, whatever the range: an alert silenced today may name a silence made last month, and
 * the page says who made it and why. Silences are made by hand, so the newest SILENCE_LIMIT cover them.
 */
async function silenceEvents(history: HistoryReader, now: number): Promise<SilenceEventRecord[]> {
  return (await history.silenceEvents({ matchers: [], from: 0, to: now, limit: SILENCE_LIMIT })).items;
}

/** `GET /history`: the search of past alerts and one alert's timeline (`?fingerprint=`). */
export async function historyPage(req: IncomingMessage, deps: HistoryPageDeps): Promise<PageReply> {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const sinceParam = params.get('since') ?? '7d';
  const since = HISTORY_SINCE_CHOICES.includes(sinceParam) ? sinceParam : '7d';
  const filter = (params.get('filter') ?? '').slice(0, 2_000);
  const fingerprint = params.get('fingerprint') ?? undefined;
  const now = deps.now();
  const data: HistoryPageData = { now, ...deps.info(), search: { filter, since } };
  const nonce = randomBytes(16).toString('base64');
  const reply = (status: number): PageReply => ({
    status,
    contentType: 'text/html; charset=utf-8',
    body: renderHistoryPage(data, nonce),
    headers: {
      'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'same-origin',
    },
  });
  const history = deps.history;
  if (history === undefined || typeof history === 'string') {
    data.problem = `The history is disabled: ${history ?? 'not configured'}.`;
    return reply(503);
  }
  let matchers: Matcher[];
  try {
    matchers = parseMatchers(filter);
  } catch (err) {
    data.problem = `Labels: ${errorMessage(err)}`;
    return reply(400);
  }
  try {
    if (fingerprint !== undefined && /^[0-9a-zA-Z_:.-]{1,128}$/.test(fingerprint)) {
      const range = { matchers: [], from: 0, to: now, limit: TIMELINE_LIMIT, fingerprint };
      const [events, attempts, silences] = await Promise.all([history.alertEvents(range), history.attempts(range), silenceEvents(history, now)]);
      data.timeline = { fingerprint, events: events.items, attempts: attempts.items };
      data.silences = silences;
    } else {
      const cursorText = params.get('cursor');
      let cursor;
      try {
        cursor = cursorText ? decodeCursor(cursorText) : undefined;
      } catch {
        cursor = undefined;
      }
      const from = now - parseDuration(since);
      const [page, silences, oncall] = await Promise.all([history.alertEvents({ matchers, from, to: now, limit: RESULTS_LIMIT, cursor }), silenceEvents(history, now), history.oncall({ from, to: now, by: 'alertname' })]);
      data.results = { events: page.items, next: encodeCursor(page.next) };
      data.oncall = oncall.rows;
      data.silences = silences;
      data.silencesInRange = silences.filter((e) => e.at >= from);
    }
  } catch {
    data.problem = 'The history database does not answer; try again later.';
    return reply(503);
  }
  return reply(200);
}
