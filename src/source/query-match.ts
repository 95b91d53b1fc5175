import type { Transfer } from './transfer.js';
import type { TransfersQuery } from './transfers-query.js';

/**
 * Whether a transfer belongs to the query's answer. The service has been seen to lose filters across
 * pages, so records are checked again here: result kind, instance, user, event and time window.
 * `filename` and `tags` are not checked: the service's matching rules for them (substring? pattern?)
 * are not documented, and dropping a record wrongly would hide a failure.
 */
export function matchesQuery(t: Transfer, query: TransfersQuery): boolean {
  if (t.time < query.start || t.time > query.end) return false;
  if (query.results === 0 && t.code !== 0) return false;
  if (query.results === -1 && t.code === 0) return false;
  if (query.instance !== undefined && query.instance !== '' && t.instance !== query.instance) return false;
  if (query.user !== undefined && query.user !== '' && t.user !== query.user) return false;
  if (query.events !== undefined && query.events.length > 0 && !query.events.includes(t.eventCode)) return false;
  return true;
}
