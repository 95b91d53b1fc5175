import type { FlowView } from '../../flows/flow-view.js';
import type { HistoryStore } from '../../history/history-store.js';
import type { TransferWatchMetrics } from '../../metrics/transfer-watch-metrics.js';
import { slaObjective } from '../../rules/registry.js';
import { reportRow } from '../../sla/sla-report.js';
import type { Clock } from '../../util/clock.js';
import type { LoadedSetup } from '../load-setup.js';
import { reportPeriod } from './sla-report-schedule.js';

/** transfer_watch_flows is computed from the flow summary this often, and first this long after start. */
const FLOW_METRIC_MS = 300_000;
const FLOW_METRIC_FIRST_MS = 30_000;
/**
 * The ledger's gauges are read from the database this often (contract section 11a asks each minute; a new occurrence
 * shows within 15 s, at two month-tallies a replica, a few ms each).
 */
const SLA_FIGURES_MS = 15_000;

/**
 * The gauges every replica keeps from the shared history, on timers of their own (not the leader's: a follower's
 * scrape shows them too): the ledger's on-time share and budget left of the current and previous month
 * (transfer_watch_sla_on_time_ratio, _budget_remaining), and the flows watched and not (transfer_watch_flows).
 */
export class ReplicaGauges {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly opts: {
      store: HistoryStore;
      flows: FlowView | undefined;
      metrics: TransferWatchMetrics;
      clock: Clock;
      setup: () => LoadedSetup;
    },
  ) {}

  start(): void {
    const { flows } = this.opts;
    if (flows) {
      // Kept current without a request (a report read once every FLOW_METRIC_MS); the first soon after start (a first
      // start's backfill fills the summary within seconds to minutes).
      this.every(FLOW_METRIC_MS, () => void flows.report().catch(() => undefined));
      this.once(FLOW_METRIC_FIRST_MS, () => void flows.report().catch(() => undefined));
    }
    this.every(SLA_FIGURES_MS, () => void this.refreshSlaFigures());
    void this.refreshSlaFigures();
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.length = 0;
  }

  /** The ledger's on-time share and budget left of the current and previous month (display_timezone), as gauges. */
  private async refreshSlaFigures(): Promise<void> {
    const { store, metrics, clock } = this.opts;
    const { config, rules } = this.opts.setup();
    const names = new Set(rules.filter((r) => r.type === 'missing_file').map((r) => r.name));
    if (names.size === 0) return;
    const now = clock.now();
    const periods = [
      { period: 'current' as const, ...reportPeriod('current_month', now, config.display_timezone) },
      { period: 'previous' as const, ...reportPeriod('previous_month', now, config.display_timezone) },
    ];
    try {
      await store.ensureSchema();
      const rows = [];
      for (const p of periods) {
        for (const t of await store.ledger.tally({ from: p.from, to: p.to })) {
          if (!names.has(t.rule)) continue;
          const r = reportRow(t, slaObjective(rules, t.rule));
          rows.push({ rule: t.rule, key: t.key, period: p.period, onTimeRatio: r.on_time_ratio, budgetRemaining: r.budget_remaining });
        }
      }
      metrics.setSlaLedgerFigures(rows);
    } catch {
      // The database does not answer: the gauges keep their last values; history_up says why.
    }
  }

  private every(ms: number, run: () => void): void {
    const t = setInterval(run, ms);
    t.unref();
    this.timers.push(t);
  }

  private once(ms: number, run: () => void): void {
    const t = setTimeout(run, ms);
    t.unref();
    this.timers.push(t);
  }
}
