/**
 * Every metric transfer-watch exposes, in one place: name, type, labels and help (contract section 4
 * plus our extensions). Dashboards, rules, docs and tests are checked against this table, so a metric
 * that is not here does not exist.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  readonly name: string;
  readonly type: MetricType;
  readonly labels: readonly string[];
  readonly help: string;
  /**
   * Labels whose values come from the monitored service or from failures (instances, error codes,
   * reasons) and so are unbounded; the cardinality guard folds these into `other`. Labels whose values
   * come from the configuration or a fixed vocabulary are never folded.
   */
  readonly foldable: readonly string[];
  /** False for our extensions beyond the contract table. */
  readonly contract: boolean;
}

function def(
  name: string,
  type: MetricType,
  labels: readonly string[],
  help: string,
  foldable: readonly string[] = [],
  contract = true,
): MetricDefinition {
  return { name, type, labels, help, foldable, contract };
}

export const METRICS = {
  transfers: def(
    'mft_transfers_total',
    'counter',
    ['source', 'mft_instance', 'event', 'result'],
    'Transfers seen in the transfer history, each counted once.',
    ['mft_instance', 'event'],
  ),
  transferBytes: def(
    'mft_transfer_bytes_total',
    'counter',
    ['source', 'mft_instance', 'event', 'result'],
    'Bytes of the transfers seen (TAMARQUIVO), each transfer counted once.',
    ['mft_instance', 'event'],
  ),
  transferErrors: def(
    'mft_transfer_errors_total',
    'counter',
    ['source', 'mft_instance', 'event', 'code'],
    'Failed transfers by error code (RESULTADO), each counted once.',
    ['mft_instance', 'event', 'code'],
  ),
  lastTransferTimestamp: def(
    'mft_last_transfer_timestamp_seconds',
    'gauge',
    ['source', 'mft_instance', 'event', 'result'],
    'Occurrence time (DATAHORA) of the latest transfer seen, in seconds since the epoch.',
    ['mft_instance', 'event'],
  ),
  sourceUp: def('transfer_watch_source_up', 'gauge', ['source'], '1 when the last poll of the source succeeded, else 0.'),
  pollDuration: def(
    'transfer_watch_poll_duration_seconds',
    'histogram',
    ['source', 'stream'],
    'Duration of one poll cycle of a stream (all windows and pages).',
  ),
  pollErrors: def(
    'transfer_watch_poll_errors_total',
    'counter',
    ['source', 'stream', 'reason'],
    'Poll cycles that failed, by reason.',
    ['reason'],
  ),
  apiRequests: def(
    'transfer_watch_api_requests_total',
    'counter',
    ['source', 'endpoint', 'status_code'],
    'HTTP requests to the transfer history API, by endpoint and status code ("error" when no response).',
    ['status_code'],
  ),
  dataLag: def(
    'transfer_watch_data_lag_seconds',
    'gauge',
    ['source', 'stream'],
    'How far behind now the stream cursor is: data newer than this is not yet seen.',
  ),
  records: def('transfer_watch_records_total', 'counter', ['source', 'stream'], 'Unique records ingested.'),
  recordsInvalid: def(
    'transfer_watch_records_invalid_total',
    'counter',
    ['source'],
    'Records that could not be read and were skipped.',
  ),
  alerts: def(
    'transfer_watch_alerts',
    'gauge',
    ['alertname', 'severity', 'state'],
    'Active alerts (pending or firing) by name, severity and state.',
  ),
  notifications: def(
    'transfer_watch_notifications_total',
    'counter',
    ['receiver', 'integration', 'outcome'],
    'Notification send attempts by receiver, integration and outcome.',
  ),
  notificationQueueLength: def(
    'transfer_watch_notification_queue_length',
    'gauge',
    [],
    'Notifications waiting in the outbox.',
  ),
  configLastReloadSuccessful: def(
    'transfer_watch_config_last_reload_successful',
    'gauge',
    [],
    '1 when the last configuration (re)load succeeded, else 0.',
  ),
  configLastReloadSuccessTimestamp: def(
    'transfer_watch_config_last_reload_success_timestamp_seconds',
    'gauge',
    [],
    'Time of the last successful configuration (re)load, in seconds since the epoch.',
    [],
    false,
  ),
  stateWriteOk: def(
    'transfer_watch_state_write_ok',
    'gauge',
    [],
    '1 when the last write to the state directory succeeded, else 0.',
    [],
    false,
  ),
  seriesFolded: def(
    'transfer_watch_series_folded_total',
    'counter',
    ['metric'],
    'Observations whose labels were folded into "other" because the metric reached metrics.max_series.',
    [],
    false,
  ),
  httpAuthFailures: def(
    'transfer_watch_http_auth_failures_total',
    'counter',
    [],
    'HTTP requests refused for wrong or missing credentials (server.web_config_file basic auth).',
    [],
    false,
  ),
  haRedisUp: def('transfer_watch_ha_redis_up', 'gauge', [], 'High availability: 1 while this replica reaches Redis, else 0 (only with ha:).'),
  haLeases: def(
    'transfer_watch_ha_leases',
    'gauge',
    ['source'],
    'High availability: 1 for each source (and "leader") whose lease this replica holds, else 0 (only with ha:).',
  ),
  haLeaseChanges: def(
    'transfer_watch_ha_lease_changes_total',
    'counter',
    ['source'],
    'High availability: leases acquired or lost by this replica, per source (and "leader").',
  ),
  historyUp: def(
    'transfer_watch_history_up',
    'gauge',
    [],
    '1 while the history database (SQLite in state.dir or PostgreSQL) takes writes and answers, else 0 (absent when history is disabled).',
  ),
  historyBacklog: def(
    'transfer_watch_history_backlog',
    'gauge',
    [],
    'History records kept in the state store, waiting to be written to the history database (grows while it is down).',
    [],
    false,
  ),
  historyGivenUp: def(
    'transfer_watch_history_records_given_up_total',
    'counter',
    ['kind'],
    'History records the database refused for their own content (a value it cannot hold), given up, by kind (alert, attempt, silence, occurrence). A refusal of the store (full, read-only, down) gives up nothing: the records wait (transfer_watch_history_backlog).',
    [],
    false,
  ),
  alertTimeToNotify: def(
    'transfer_watch_alert_time_to_notify_seconds',
    'histogram',
    ['alertname'],
    'From an alert firing to the first delivered notification carrying it, once per firing.',
  ),
  alertTimeToAck: def(
    'transfer_watch_alert_time_to_ack_seconds',
    'histogram',
    ['alertname'],
    'From an alert firing to its first acknowledgement (contract 14), once per firing.',
  ),
  alertDuration: def(
    'transfer_watch_alert_duration_seconds',
    'histogram',
    ['alertname'],
    'From an alert firing to its resolution (time to resolve), observed when it resolves.',
  ),
  slaOccurrences: def(
    'transfer_watch_sla_occurrences_total',
    'counter',
    ['rule', 'outcome'],
    'Occurrences of expected files decided, by rule, outcome (on_time, late, missing, no_data) and the key labels of the rule (its for_each label); counted when decided.',
  ),
  slaObjective: def(
    'transfer_watch_sla_objective',
    'gauge',
    ['rule'],
    'The on-time share a missing_file rule owes per period (its sla.objective), for SLO rules to compare with.',
  ),
  slaLateness: def(
    'transfer_watch_sla_lateness_seconds',
    'histogram',
    ['rule'],
    'How late expected files arrived after their deadline (late occurrences).',
  ),
  slaBackfillPending: def(
    'transfer_watch_sla_backfill_rules',
    'gauge',
    [],
    'Rules whose SLA ledger is being filled from the service history (sla.backfill); 0 when none.',
    [],
    false,
  ),
  slaBackfillTransfers: def(
    'transfer_watch_sla_backfill_transfers',
    'gauge',
    [],
    'Transfers read by the running (or last) SLA backfill.',
    [],
    false,
  ),
  slaBackfillWindows: def(
    'transfer_watch_sla_backfill_windows',
    'gauge',
    ['state'],
    'Source windows of the running (or last) SLA backfill: read (kept, a resumed backfill does not read them again), pending (not tried yet), failing (failed, to be read again with backoff) or unread (given up after every attempt: their deadlines are no_data).',
    [],
    false,
  ),
  slaOnTimeRatio: def(
    'transfer_watch_sla_on_time_ratio',
    'gauge',
    ['rule', 'period'],
    "The ledger's on-time share per rule, key labels (its for_each label) and period (current or previous month, display_timezone), backfilled occurrences included; refreshed every 15 s. Absent while a period has no judged occurrence.",
  ),
  slaBudgetRemaining: def(
    'transfer_watch_sla_budget_remaining',
    'gauge',
    ['rule', 'period'],
    "The share of the period's error budget (1 - objective of the judged occurrences) not yet used, per rule, key labels and period, from the ledger; negative when the SLA is missed. Refreshed every 15 s.",
  ),
  flows: def(
    'transfer_watch_flows',
    'gauge',
    ['watched', 'state'],
    'Recurring flows found in the flow summary (contract section 13), by whether a configured rule watches them (watched="true") or not ("false"); state="stopped": flows that were recurring and missed their last three periods (13a).',
  ),
  buildInfo: def(
    'transfer_watch_build_info',
    'gauge',
    ['version', 'node_version'],
    'Always 1; labels say which version is running.',
    [],
    false,
  ),
} as const satisfies Record<string, MetricDefinition>;

export type MetricKey = keyof typeof METRICS;

/** The value unbounded labels are folded into once a metric reaches its series limit. */
export const FOLDED_LABEL_VALUE = 'other';

/** Prefixes of the default process metrics (prom-client's collectDefaultMetrics). */
export const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;

/** Names of the series a metric family exposes (histograms expose _bucket, _sum and _count). */
export function exposedSeriesNames(d: MetricDefinition): string[] {
  return d.type === 'histogram' ? [`${d.name}_bucket`, `${d.name}_sum`, `${d.name}_count`] : [d.name];
}

/** Every series name of our own metrics (not the default process metrics). */
export function allExposedSeriesNames(): string[] {
  return Object.values(METRICS).flatMap((d) => exposedSeriesNames(d));
}
