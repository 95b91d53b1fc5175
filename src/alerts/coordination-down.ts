import type { AlertCandidate } from './alert-candidate.js';

/** Built-in alert (contract section 9): this replica has not reached Redis for `ha.lease_ttl`. */
export const COORDINATION_DOWN_ALERTNAME = 'TransferWatchCoordinationDown';

export function coordinationDownCandidate(replica: string, redis: string): AlertCandidate {
  return {
    labels: { alertname: COORDINATION_DOWN_ALERTNAME, severity: 'critical', replica },
    annotations: {
      summary: `Replica ${replica} cannot reach Redis`,
      description: `Replica ${replica} has not reached Redis at ${redis} for ha.lease_ttl. It keeps polling the sources it held and notifying from its own memory (fail open); notifications may repeat once Redis is back, none is dropped.`,
      runbook_url: '/runbooks/TransferWatchCoordinationDown',
    },
    values: {},
    samples: [],
    for: 0,
    keepFiringFor: 0,
  };
}
