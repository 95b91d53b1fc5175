import type { AlertCandidate } from './alert-candidate.js';

/** Built-in alert: a source has had no successful poll for `poll.stale_after` (contract section 3). */
export const SOURCE_DOWN_ALERTNAME = 'TransferWatchSourceDown';
/** The store's rule key for built-in alerts; not a valid rule name, so no rule file can collide with it. */
export const SOURCE_DOWN_RULE = 'builtin:source_down';

export function sourceDownCandidate(source: string, detail?: string): AlertCandidate {
  return {
    labels: { alertname: SOURCE_DOWN_ALERTNAME, severity: 'critical', source },
    annotations: {
      summary: `Transfer history source ${source} is down`,
      description:
        detail ??
        `No successful poll of source ${source} within poll.stale_after; rules waiting for its data (missing_file) do not decide until it is back.`,
      runbook_url: '/runbooks/TransferWatchSourceDown',
    },
    values: {},
    samples: [],
    for: 0,
    keepFiringFor: 0,
  };
}
