import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Alert } from '../alerts/alert.js';
import type { Transfer } from '../source/transfer.js';
import { ExpositionRenderer } from './exposition-renderer.js';
import { METRICS, type MetricDefinition } from './metric-names.js';
import { SeriesGuard, seriesKey, type LabelSet } from './series-guard.js';

export type Stream = 'failures' | 'successes';
export type ApiEndpoint = 'token' | 'transfers';
export type NotificationOutcome = 'sent' | 'failed';

export interface TransferWatchMetricsOptions {
  /** With `ha:`: the lease names (sources and "leader") of the transfer_watch_ha_* metrics; absent, none. */
  haLeases?: readonly string[];
  /** The history is on (contract section 12): history_up and the alert time histograms exist. */
  history?: boolean;
  /** Series per metric family before unbounded labels fold into `other` (config `metrics.max_series`). */
  maxSeries: number;
  /** transfer-watch version for `transfer_watch_build_info`. */
  version: string;
  /** Include prom-client's default process metrics (default true; tests may turn them off). */
  collectDefault?: boolean;
}

/**
 * Default metrics whose names end in `_total` although they are gauges: `promtool check metrics` rejects
 * them (the contract requires a clean check). Their per-type breakdowns (`nodejs_active_handles{type}`, ...)
 * stay, so nothing is lost.
 */
const LINT_FAILING_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

// Poll cycles page through up to max_window of history, so they run from milliseconds to minutes.
const POLL_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Group waits are seconds to minutes; retries after an outage reach hours. */
const TIME_TO_NOTIFY_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 14400];
/** A burst resolves in minutes; a missing file may stay open for a day or more. */
/** Minutes to hours late: a file an hour late and one a day late are told apart. */
const SLA_LATENESS_BUCKETS = [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400];
const ALERT_DURATION_BUCKETS = [60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800];

const EVENTS_PREINITIALISED = ['transmission', 'reception'];
const RESULTS = ['success', 'error'] as const;

/** A transfer's series in the per-transfer families, as the series guard admitted them. */
interface TransferSeries {
  /** What it is the series of (with the instance it is filed under). */
  source: string;
  event: string;
  result: string;
  counted: LabelSet;
  bytes: LabelSet;
  lastLabels: LabelSet;
  lastKey: string;
  /**
   * Counted since the last flush into prom-client (see observeTransfer); only a remembered series (admitted,
   * none of its families folded) gathers here, the others are counted into prom-client at once.
   */
  pending: { transfers: number; bytes: number; lastSeconds: number } | undefined;
}

/**
 * All of transfer-watch's Prometheus metrics (contract section 4) on a registry of its own. The poller,
 * alert store and notifier report through the methods below; `GET /metrics` serves `metrics()`.
 */
export class TransferWatchMetrics {
  readonly registry: Registry;
  readonly contentType: string;

  private readonly renderer: ExpositionRenderer;
  private readonly guard: SeriesGuard;
  /** Admitted series of recent (source, instance, event, result) combinations, by instance; see transferSeriesOf. */
  private readonly transferSeries = new Map<string, TransferSeries[]>();
  /** Series in `transferSeries`. */
  private rememberedSeries = 0;
  private readonly maxTransferSeries: number;
  /** Current value of each mft_last_transfer_timestamp_seconds series (it only moves forward). */
  private readonly lastTransferSeconds = new Map<string, number>();
  /** Remembered series with counts not yet in prom-client (see observeTransfer). */
  private dirtySeries: TransferSeries[] = [];

  private readonly transfers: Counter<string>;
  private readonly transferBytes: Counter<string>;
  private readonly transferErrors: Counter<string>;
  private readonly lastTransferTimestamp: Gauge<string>;
  private readonly sourceUp: Gauge<string>;
  private readonly pollDuration: Histogram<string>;
  private readonly pollErrors: Counter<string>;
  private readonly apiRequests: Counter<string>;
  private readonly dataLag: Gauge<string>;
  private readonly records: Counter<string>;
  private readonly recordsInvalid: Counter<string>;
  private readonly alerts: Gauge<string>;
  private readonly notifications: Counter<string>;
  private readonly notificationQueueLength: Gauge<string>;
  private readonly configLastReloadSuccessful: Gauge<string>;
  private readonly configLastReloadSuccessTimestamp: Gauge<string>;
  private readonly stateWriteOk: Gauge<string>;
  private readonly seriesFolded: Counter<string>;
  private readonly httpAuthFailures: Counter<string>;
  private readonly ha: { redisUp: Gauge<string>; leases: Gauge<string>; changes: Counter<string> } | undefined;
  private backfill: { rules: Gauge<string>; transfers: Gauge<string> } | undefined;
  private backfillWindows: Gauge<string> | undefined;
  private flows: Gauge<string> | undefined;
  private sla: { labelNames: string[]; occurrences: Counter<string>; lateness: Histogram<string>; objective: Gauge<string>; onTime: Gauge<string>; budget: Gauge<string> } | undefined;
  private readonly history: { up: Gauge<string>; backlog: Gauge<string>; givenUp: Counter<string>; timeToNotify: Histogram<string>; timeToAck: Histogram<string>; duration: Histogram<string> } | undefined;

  constructor(opts: TransferWatchMetricsOptions) {
    this.registry = new Registry();
    this.contentType = this.registry.contentType;
    this.renderer = new ExpositionRenderer(this.registry);

    if (opts.collectDefault ?? true) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of LINT_FAILING_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
    }

    const registers = [this.registry];
    // `collect` runs before the family is read (prom-client calls it from get()).
    const counter = (d: MetricDefinition, collect?: () => void): Counter<string> =>
      new Counter({ name: d.name, help: d.help, labelNames: d.labels, registers, ...(collect ? { collect } : {}) });
    const gauge = (d: MetricDefinition, collect?: () => void): Gauge<string> =>
      new Gauge({ name: d.name, help: d.help, labelNames: d.labels, registers, ...(collect ? { collect } : {}) });

    // Each of the three families flushes what observeTransfer gathered before it is read (whichever comes first).
    const flush = (): void => this.flushTransfers();
    this.transfers = counter(METRICS.transfers, flush);
    this.transferBytes = counter(METRICS.transferBytes, flush);
    this.transferErrors = counter(METRICS.transferErrors);
    this.lastTransferTimestamp = gauge(METRICS.lastTransferTimestamp, flush);
    this.sourceUp = gauge(METRICS.sourceUp);
    this.pollDuration = new Histogram({
      name: METRICS.pollDuration.name,
      help: METRICS.pollDuration.help,
      labelNames: METRICS.pollDuration.labels,
      buckets: POLL_DURATION_BUCKETS,
      registers,
    });
    this.pollErrors = counter(METRICS.pollErrors);
    this.apiRequests = counter(METRICS.apiRequests);
    this.dataLag = gauge(METRICS.dataLag);
    this.records = counter(METRICS.records);
    this.recordsInvalid = counter(METRICS.recordsInvalid);
    this.alerts = gauge(METRICS.alerts);
    this.notifications = counter(METRICS.notifications);
    this.notificationQueueLength = gauge(METRICS.notificationQueueLength);
    this.configLastReloadSuccessful = gauge(METRICS.configLastReloadSuccessful);
    this.configLastReloadSuccessTimestamp = gauge(METRICS.configLastReloadSuccessTimestamp);
    this.stateWriteOk = gauge(METRICS.stateWriteOk);
    this.seriesFolded = counter(METRICS.seriesFolded);
    const buildInfo = gauge(METRICS.buildInfo);
    this.httpAuthFailures = counter(METRICS.httpAuthFailures);
    this.httpAuthFailures.inc(0);
    // Only a replica of an HA deployment has these; a single process would show a misleading redis_up 0.
    this.ha = opts.haLeases
      ? { redisUp: gauge(METRICS.haRedisUp), leases: gauge(METRICS.haLeases), changes: counter(METRICS.haLeaseChanges) }
      : undefined;
    if (this.ha && opts.haLeases) {
      this.ha.redisUp.set(1);
      for (const lease of opts.haLeases) {
        this.ha.leases.set({ source: lease }, 0);
        this.ha.changes.inc({ source: lease }, 0);
      }
    }

    this.history = opts.history
      ? {
          up: gauge(METRICS.historyUp),
          backlog: gauge(METRICS.historyBacklog),
          givenUp: new Counter({ name: METRICS.historyGivenUp.name, help: METRICS.historyGivenUp.help, labelNames: METRICS.historyGivenUp.labels, registers }),
          timeToNotify: new Histogram({ name: METRICS.alertTimeToNotify.name, help: METRICS.alertTimeToNotify.help, labelNames: METRICS.alertTimeToNotify.labels, buckets: TIME_TO_NOTIFY_BUCKETS, registers }),
          // A page answered in a minute and one answered at the end of a night are told apart.
          timeToAck: new Histogram({ name: METRICS.alertTimeToAck.name, help: METRICS.alertTimeToAck.help, labelNames: METRICS.alertTimeToAck.labels, buckets: TIME_TO_NOTIFY_BUCKETS, registers }),
          duration: new Histogram({ name: METRICS.alertDuration.name, help: METRICS.alertDuration.help, labelNames: METRICS.alertDuration.labels, buckets: ALERT_DURATION_BUCKETS, registers }),
        }
      : undefined;
    this.history?.up.set(1);
    this.history?.backlog.set(0);

    this.maxTransferSeries = opts.maxSeries;
    this.guard = new SeriesGuard(opts.maxSeries, (metric) => this.seriesFolded.inc({ metric }));
    // At 0 from the start, so `increase()` sees the first fold.
    for (const d of Object.values(METRICS)) if (d.foldable.length > 0) this.seriesFolded.inc({ metric: d.name }, 0);

    buildInfo.set({ version: opts.version, node_version: process.version }, 1);
    this.notificationQueueLength.set(0);
    // Unknown until the first load reports; 0 would claim a failed load.
    this.stateWriteOk.set(1);
  }

  /** The exposition text for `GET /metrics`: `registry.metrics()` byte for byte, from a faster renderer. */
  metrics(): Promise<string> {
    return this.renderer.render();
  }

  /**
   * Create a source's series at 0 before its first event, so `rate()` and absence-free alerting work from
   * the first scrape. `instances` are the configured instances (if any) whose transfer series to create.
   */
  initSource(source: string, streams: readonly Stream[], instances: readonly string[] = []): void {
    this.sourceUp.set({ source }, 0);
    this.recordsInvalid.inc({ source }, 0);
    for (const stream of streams) {
      this.pollDuration.zero({ source, stream });
      this.records.inc({ source, stream }, 0);
    }
    for (const endpoint of ['token', 'transfers'] as const) {
      this.inc(this.apiRequests, METRICS.apiRequests, { source, endpoint, status_code: '200' }, 0);
    }
    for (const mft_instance of instances) {
      for (const event of EVENTS_PREINITIALISED) {
        for (const result of RESULTS) {
          const labels = { source, mft_instance, event, result };
          this.inc(this.transfers, METRICS.transfers, labels, 0);
          this.inc(this.transferBytes, METRICS.transferBytes, labels, 0);
        }
      }
    }
  }

  /** Create a receiver's notification series at 0 (sent and failed), for the same reason as initSource. */
  initReceiver(receiver: string, integration: string): void {
    for (const outcome of ['sent', 'failed'] as const) this.notifications.inc({ receiver, integration, outcome }, 0);
  }

  /**
   * Count one transfer (each is handed over once: the poller deduplicates overlapping windows). A remembered
   * series gathers its counts in `pending` and they reach prom-client when it is read (every get() of those
   * families flushes first): prom-client hashes the labels on every inc() and set(), and three of them per
   * transfer were a seventh of a backfill's time. What a scrape shows is the same.
   */
  observeTransfer(t: Transfer): void {
    const series = this.transferSeriesOf(t);
    const size = Math.max(0, t.size);
    const seconds = t.time / 1000;
    const pending = series.pending;
    if (pending) {
      if (pending.transfers === 0) this.dirtySeries.push(series);
      pending.transfers += 1;
      pending.bytes += size;
      if (seconds > pending.lastSeconds) pending.lastSeconds = seconds;
    } else {
      this.transfers.inc(series.counted, 1);
      this.transferBytes.inc(series.bytes, size);
      this.setLastTransfer(series, seconds);
    }
    if (t.result === 'error') {
      const errorLabels = { source: t.source, mft_instance: t.instance, event: t.event, code: String(t.code) };
      this.inc(this.transferErrors, METRICS.transferErrors, errorLabels, 1);
    }
  }

  /** mft_last_transfer_timestamp_seconds only moves forward. */
  private setLastTransfer(series: TransferSeries, seconds: number): void {
    const current = this.lastTransferSeconds.get(series.lastKey);
    if (current === undefined || seconds > current) {
      this.lastTransferSeconds.set(series.lastKey, seconds);
      this.lastTransferTimestamp.set(series.lastLabels, seconds);
    }
  }

  /** What remembered series gathered since the last flush, into prom-client (before any of it is read). */
  private flushTransfers(): void {
    const dirty = this.dirtySeries;
    if (dirty.length === 0) return;
    this.dirtySeries = [];
    for (const series of dirty) {
      const pending = series.pending;
      if (!pending || pending.transfers === 0) continue;
      this.transfers.inc(series.counted, pending.transfers);
      this.transferBytes.inc(series.bytes, pending.bytes);
      this.setLastTransfer(series, pending.lastSeconds);
      pending.transfers = 0;
      pending.bytes = 0;
      pending.lastSeconds = -Infinity;
    }
  }

  /**
   * The series of a transfer's (source, instance, event, result) in the three per-transfer families. Admitted
   * through the guard once and remembered while none of them was folded: the guard's keys only grow, so an
   * admitted label set stays admitted, and looking it up again (three JSON keys per transfer) was most of what
   * counting a transfer cost. A folded one is admitted anew each time, so every folded observation is counted.
   */
  private transferSeriesOf(t: Transfer): TransferSeries {
    // Filed by instance, then compared field by field: an instance has a few (source, event, result) of its own, and
    // a key string built per transfer (and hashed as a new string) was most of counting one.
    const filed = this.transferSeries.get(t.instance);
    if (filed !== undefined) {
      for (let i = 0; i < filed.length; i++) {
        const known = filed[i] as TransferSeries;
        if (known.result === t.result && known.event === t.event && known.source === t.source) return known;
      }
    }
    const labels = { source: t.source, mft_instance: t.instance, event: t.event, result: t.result };
    const counted = this.guard.admit(METRICS.transfers, labels);
    const bytes = this.guard.admit(METRICS.transferBytes, labels);
    const lastLabels = this.guard.admit(METRICS.lastTransferTimestamp, labels);
    const series: TransferSeries = {
      source: t.source,
      event: t.event,
      result: t.result,
      counted,
      bytes,
      lastLabels,
      lastKey: seriesKey(METRICS.lastTransferTimestamp, lastLabels),
      pending: undefined,
    };
    if (counted === labels && bytes === labels && lastLabels === labels) {
      // Bounded like the guard's own memory: past it, start over (entries are only a shortcut). What the
      // forgotten entries gathered is flushed first.
      if (this.rememberedSeries >= this.maxTransferSeries) {
        this.flushTransfers();
        this.transferSeries.clear();
        this.rememberedSeries = 0;
      }
      series.pending = { transfers: 0, bytes: 0, lastSeconds: -Infinity };
      const list = this.transferSeries.get(t.instance);
      if (list === undefined) this.transferSeries.set(t.instance, [series]);
      else list.push(series);
      this.rememberedSeries += 1;
    }
    return series;
  }

  /** One poll cycle of a stream took `seconds`; `error` is the failure reason when it failed. */
  observePoll(source: string, stream: Stream, seconds: number, error?: string): void {
    this.pollDuration.observe({ source, stream }, Math.max(0, seconds));
    if (error !== undefined) {
      this.inc(this.pollErrors, METRICS.pollErrors, { source, stream, reason: error }, 1);
    }
  }

  /** One HTTP request to the service; `statusCode` is the HTTP status or `error` when none came back. */
  observeApiRequest(source: string, endpoint: ApiEndpoint, statusCode: string): void {
    this.inc(this.apiRequests, METRICS.apiRequests, { source, endpoint, status_code: statusCode }, 1);
  }

  setDataLag(source: string, stream: Stream, seconds: number): void {
    this.dataLag.set({ source, stream }, Math.max(0, seconds));
  }

  /** `n` unique records ingested. */
  addRecords(source: string, stream: Stream, n: number): void {
    if (n > 0) this.records.inc({ source, stream }, n);
  }

  addInvalidRecords(source: string, n: number): void {
    if (n > 0) this.recordsInvalid.inc({ source }, n);
  }

  setSourceUp(source: string, up: boolean): void {
    this.sourceUp.set({ source }, up ? 1 : 0);
  }

  /** Replace transfer_watch_alerts with the counts of the given set (resolved alerts are not active). */
  setAlerts(alerts: readonly Alert[]): void {
    const counts = new Map<string, { labels: LabelSet; n: number }>();
    for (const alert of alerts) {
      if (alert.state === 'resolved') continue;
      const labels = {
        alertname: alert.labels['alertname'] ?? '',
        severity: alert.labels['severity'] ?? '',
        state: alert.state,
      };
      const key = seriesKey(METRICS.alerts, labels);
      const entry = counts.get(key);
      if (entry) entry.n += 1;
      else counts.set(key, { labels, n: 1 });
    }
    this.alerts.reset();
    for (const { labels, n } of counts.values()) this.alerts.set(labels, n);
  }

  observeNotification(receiver: string, integration: string, outcome: NotificationOutcome): void {
    this.notifications.inc({ receiver, integration, outcome }, 1);
  }

  setNotificationQueueLength(n: number): void {
    this.notificationQueueLength.set(Math.max(0, n));
  }

  /** Outcome of a configuration (re)load at `at` (epoch ms). */
  setConfigReload(ok: boolean, at: number): void {
    this.configLastReloadSuccessful.set(ok ? 1 : 0);
    if (ok) this.configLastReloadSuccessTimestamp.set(at / 1000);
  }

  addHttpAuthFailure(): void {
    this.httpAuthFailures.inc();
  }

  setRedisUp(up: boolean): void {
    this.ha?.redisUp.set(up ? 1 : 0);
  }

  /** A lease (a source name, or "leader") acquired or lost by this replica. */
  setLeaseHeld(lease: string, held: boolean): void {
    this.ha?.leases.set({ source: lease }, held ? 1 : 0);
    this.ha?.changes.inc({ source: lease });
  }

  setHistoryUp(up: boolean): void {
    this.history?.up.set(up ? 1 : 0);
  }

  setHistoryBacklog(n: number): void {
    this.history?.backlog.set(n);
  }

  /** A history record the database refused for its content was given up. */
  observeHistoryGivenUp(kind: string): void {
    this.history?.givenUp.inc({ kind });
  }

  /**
   * The SLA series of the missing_file rules: the occurrences counter carries `rule`, `outcome` and the key labels
   * of every rule (for_each labels, '' where a rule has none); each rule and outcome exists at 0 from the start.
   */
  initSla(rules: ReadonlyArray<{ name: string; keyLabels: readonly string[]; keys?: ReadonlyArray<Record<string, string>>; objective?: number | undefined }>): void {
    if (!this.history) return;
    const keyLabels = [...new Set(rules.flatMap((r) => r.keyLabels))].filter((l) => l !== 'rule' && l !== 'outcome').sort();
    const names = [...METRICS.slaOccurrences.labels, ...keyLabels];
    if (!this.sla || this.sla.labelNames.join(',') !== names.join(',')) {
      if (this.sla) {
        this.registry.removeSingleMetric(METRICS.slaOccurrences.name);
        this.registry.removeSingleMetric(METRICS.slaLateness.name);
        this.registry.removeSingleMetric(METRICS.slaObjective.name);
        this.registry.removeSingleMetric(METRICS.slaOnTimeRatio.name);
        this.registry.removeSingleMetric(METRICS.slaBudgetRemaining.name);
      }
      const ledgerNames = [...METRICS.slaOnTimeRatio.labels, ...keyLabels];
      this.sla = {
        labelNames: names,
        occurrences: new Counter({ name: METRICS.slaOccurrences.name, help: METRICS.slaOccurrences.help, labelNames: names, registers: [this.registry] }),
        lateness: new Histogram({ name: METRICS.slaLateness.name, help: METRICS.slaLateness.help, labelNames: METRICS.slaLateness.labels, buckets: SLA_LATENESS_BUCKETS, registers: [this.registry] }),
        objective: new Gauge({ name: METRICS.slaObjective.name, help: METRICS.slaObjective.help, labelNames: METRICS.slaObjective.labels, registers: [this.registry] }),
        onTime: new Gauge({ name: METRICS.slaOnTimeRatio.name, help: METRICS.slaOnTimeRatio.help, labelNames: ledgerNames, registers: [this.registry] }),
        budget: new Gauge({ name: METRICS.slaBudgetRemaining.name, help: METRICS.slaBudgetRemaining.help, labelNames: ledgerNames, registers: [this.registry] }),
      };
    }
    const sla = this.sla;
    sla.objective.reset();
    for (const rule of rules) {
      sla.lateness.zero({ rule: rule.name });
      if (rule.objective !== undefined) sla.objective.set({ rule: rule.name }, rule.objective);
      // Every expected key's series exist at 0: an occurrence a day is a sparse counter, and `increase()` only
      // counts the first one when the series was there before it.
      for (const key of rule.keys ?? [{}]) {
        for (const outcome of ['on_time', 'late', 'missing', 'no_data']) {
          const labels: Record<string, string> = {};
          for (const name of sla.labelNames) labels[name] = name === 'rule' ? rule.name : name === 'outcome' ? outcome : (key[name] ?? '');
          sla.occurrences.inc(labels, 0);
        }
      }
    }
  }

  /**
   * The ledger's own figures (contract section 11a): on-time share and budget left per rule, key and period, as the
   * report computes them; every series is replaced at each refresh (a rule removed leaves none behind).
   */
  setSlaLedgerFigures(rows: ReadonlyArray<{ rule: string; key: Record<string, string>; period: 'current' | 'previous'; onTimeRatio: number | null; budgetRemaining: number | null }>): void {
    const sla = this.sla;
    if (!sla) return;
    sla.onTime.reset();
    sla.budget.reset();
    const keyNames = sla.labelNames.filter((n) => n !== 'rule' && n !== 'outcome');
    for (const r of rows) {
      const labels: Record<string, string> = { rule: r.rule };
      for (const name of keyNames) labels[name] = r.key[name] ?? '';
      labels['period'] = r.period;
      if (r.onTimeRatio !== null) sla.onTime.set(labels, r.onTimeRatio);
      if (r.budgetRemaining !== null) sla.budget.set(labels, r.budgetRemaining);
    }
  }

  /** The SLA backfill: rules being filled, and transfers read so far. */
  setSlaBackfill(rules: number, transfers: number): void {
    if (!this.history) return;
    this.backfill ??= { rules: new Gauge({ name: METRICS.slaBackfillPending.name, help: METRICS.slaBackfillPending.help, registers: [this.registry] }), transfers: new Gauge({ name: METRICS.slaBackfillTransfers.name, help: METRICS.slaBackfillTransfers.help, registers: [this.registry] }) };
    this.backfill.rules.set(rules);
    this.backfill.transfers.set(transfers);
  }

  /** The SLA backfill's source windows by state (read, failing, unread). */
  setSlaBackfillWindows(windows: { read: number; pending: number; failing: number; unread: number }): void {
    if (!this.history) return;
    this.backfillWindows ??= new Gauge({ name: METRICS.slaBackfillWindows.name, help: METRICS.slaBackfillWindows.help, labelNames: METRICS.slaBackfillWindows.labels, registers: [this.registry] });
    for (const [state, n] of Object.entries(windows)) this.backfillWindows.set({ state }, n);
  }

  /** The recurring flows of the flow summary, watched by a configured rule or not, and those that stopped (13a). */
  setFlows(watched: number, unwatched: number, stopped = 0): void {
    if (!this.history) return;
    this.flows ??= new Gauge({ name: METRICS.flows.name, help: METRICS.flows.help, labelNames: METRICS.flows.labels, registers: [this.registry] });
    this.flows.set({ watched: 'true' }, watched);
    this.flows.set({ watched: 'false' }, unwatched);
    this.flows.set({ state: 'stopped' }, stopped);
  }

  /** An occurrence decided: counted by outcome, its lateness observed when late. */
  observeOccurrence(rule: string, outcome: string, key: Record<string, string>, latenessSeconds: number | null): void {
    const sla = this.sla;
    if (!sla) return;
    const labels: Record<string, string> = {};
    for (const name of sla.labelNames) labels[name] = name === 'rule' ? rule : name === 'outcome' ? outcome : (key[name] ?? '');
    sla.occurrences.inc(labels);
    if (outcome === 'late' && latenessSeconds !== null) sla.lateness.observe({ rule }, latenessSeconds);
  }

  /** The alert histograms of these alertnames exist at 0 from the first scrape, so `rate()` works on them. */
  initAlertnames(names: readonly string[]): void {
    if (!this.history) return;
    for (const alertname of names) {
      this.history.timeToNotify.zero({ alertname });
      this.history.timeToAck.zero({ alertname });
      this.history.duration.zero({ alertname });
    }
  }

  /** From firing to the first delivered notification, in seconds. */
  observeTimeToNotify(alertname: string, seconds: number): void {
    this.history?.timeToNotify.observe(this.guard.admit(METRICS.alertTimeToNotify, { alertname }), Math.max(0, seconds));
  }

  /** From firing to the first acknowledgement, in seconds (contract 14). */
  observeTimeToAck(alertname: string, seconds: number): void {
    this.history?.timeToAck.observe(this.guard.admit(METRICS.alertTimeToAck, { alertname }), Math.max(0, seconds));
  }

  /** From firing to resolution, in seconds. */
  observeAlertDuration(alertname: string, seconds: number): void {
    this.history?.duration.observe(this.guard.admit(METRICS.alertDuration, { alertname }), Math.max(0, seconds));
  }

  setStateWriteOk(ok: boolean): void {
    this.stateWriteOk.set(ok ? 1 : 0);
  }

  private inc(counter: Counter<string>, definition: MetricDefinition, labels: LabelSet, n: number): void {
    counter.inc(this.guard.admit(definition, labels), n);
  }
}
