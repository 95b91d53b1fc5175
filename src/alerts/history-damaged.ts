import type { AlertCandidate } from './alert-candidate.js';

/** Built-in alert (contract 12a): the history file was found damaged, and what could be repaired is not yet. */
export const HISTORY_DAMAGED_ALERTNAME = 'TransferWatchHistoryDamaged';

export function historyDamagedCandidate(where: string, found: { reason: string; movedTo: string; restoredFrom?: { file: string; at: number } | undefined }): AlertCandidate {
  const restored = found.restoredFrom
    ? `Its newest good backup (taken ${new Date(found.restoredFrom.at).toISOString()}) was restored in its place; the SLA ledger's span since then is being re-judged from the service history, and the alert and notification history of that span is lost but for what the state store's journal still held.`
    : 'There was no good backup to restore: a new, empty file was started, and the SLA ledger is filled again from the service history (sla.backfill) where it can be.';
  return {
    labels: { alertname: HISTORY_DAMAGED_ALERTNAME, severity: 'critical' },
    annotations: {
      summary: `The history database ${where} was found damaged`,
      description: `${found.reason}. The damaged file was moved aside to ${found.movedTo}. ${restored}`,
      runbook_url: '/runbooks/TransferWatchHistoryDamaged',
    },
    values: {},
    samples: [],
    for: 0,
    keepFiringFor: 0,
  };
}
