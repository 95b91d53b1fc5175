import type { AlertCandidate } from './alert-candidate.js';

/** Built-in alert (contract section 11): the history database has refused writes for HISTORY_DOWN_AFTER_MS. */
export const HISTORY_DOWN_ALERTNAME = 'TransferWatchHistoryDown';
/** A restart of PostgreSQL or a short network cut is not a page: writes wait in the state store meanwhile. */
export const HISTORY_DOWN_AFTER_MS = 60_000;

export function historyDownCandidate(where: string, waiting: number): AlertCandidate {
  return {
    labels: { alertname: HISTORY_DOWN_ALERTNAME, severity: 'warning' },
    annotations: {
      summary: `The history database ${where} refuses writes`,
      description: `The history of alerts and notifications cannot be written to ${where}. Alerting and notifications go on; ${waiting} records wait in the state store and are written once it is back (none is lost while fewer than 50,000 wait).`,
      runbook_url: '/runbooks/TransferWatchHistoryDown',
    },
    values: { waiting },
    samples: [],
    for: 0,
    keepFiringFor: 0,
  };
}
